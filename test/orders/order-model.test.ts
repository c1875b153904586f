import { readFileSync } from "node:fs";
import path from "node:path";
import { createHolds } from "../../src/orders/hold-order";
import {
  cancellableStatuses,
  decide,
  orderStatuses,
  renderOrderModel,
  type OrderAction,
  type OrderFacts,
} from "../../src/shared/order-model";
import { createOrderRepository, type OrderStatus } from "../../src/orders/order-repository";
import { createOrderRedrive } from "../../src/orders/redrive-order";
import { loadOrderFacts } from "../../src/orders/model-check";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The order model against the SQL guards that must stay single statements (decision 0170): every
 * combination of the facts a guard reads is put in the database, the real statement is run, and
 * its verdict must be the model's. A guard edited without the model (or the other way round)
 * fails here. And docs/order-model.md shows the model as it is.
 */
describe("the order model and the SQL guards agree", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  /** The labels an order may have, as the guards tell them apart. */
  const labelCases = {
    none: [],
    unscanned: [{ trackerStatus: null }],
    "pre-transit": [{ trackerStatus: "pre_transit" }],
    scanned: [{ trackerStatus: "in_transit" }],
    "asked back": [{ trackerStatus: null, labelRefundStatus: "submitted" }],
    delivered: [{ trackerStatus: "delivered", status: "delivered" as const }],
    "re-shipped, new label unscanned": [
      { trackerStatus: "return_to_sender", labelRefundStatus: "rejected", superseded: true },
      { trackerStatus: null, generation: 1 },
    ],
  } satisfies Record<string, LabelSpec[]>;
  type LabelCase = keyof typeof labelCases;
  interface LabelSpec {
    trackerStatus: string | null;
    labelRefundStatus?: string;
    status?: "booked" | "delivered";
    superseded?: boolean;
    generation?: number;
  }
  interface Case {
    status: OrderStatus;
    cancelRequested: boolean;
    labels: LabelCase;
    holdReason: string | null;
    runFailed: boolean;
  }
  let tracking = 0;

  async function orderWith(c: Case): Promise<{ id: string; facts: OrderFacts }> {
    const specs: LabelSpec[] = labelCases[c.labels];
    const order = await database.db.order.create({
      data: {
        customerId: "cus_model",
        email: "buyer@example.com",
        currency: "usd",
        total: 1000,
        status: c.status,
        cancelRequestedAt: c.cancelRequested ? new Date() : null,
        holdReason: c.holdReason,
        heldAt: c.holdReason ? new Date() : null,
      },
    });
    for (const spec of specs) {
      tracking += 1;
      await database.db.shipment.create({
        data: {
          orderId: order.id,
          parcelNumber: 1,
          generation: spec.generation ?? 0,
          carrier: "USPS",
          trackingNumber: `MODEL${tracking}`,
          trackingUrl: "https://track.example",
          trackerStatus: spec.trackerStatus,
          status: spec.status ?? "booked",
          labelRefundStatus: spec.labelRefundStatus ?? null,
          supersededAt: spec.superseded ? new Date() : null,
        },
      });
    }
    if (c.runFailed)
      await database.db.orderTimelineEntry.create({
        data: { orderId: order.id, kind: "run-failed", detail: {} },
      });
    const facts: OrderFacts = {
      status: c.status,
      cancelRequested: c.cancelRequested,
      holdReason: c.holdReason,
      labels: specs
        .filter((spec) => !spec.superseded)
        .map((spec) => ({
          status: spec.status ?? "booked",
          trackerStatus: spec.trackerStatus,
          labelRefundStatus: spec.labelRefundStatus ?? null,
        })),
      runFailed: c.runFailed,
      labelPurchaseInFlight: false,
      captured: 0,
      refunded: 0,
    };
    return { id: order.id, facts };
  }

  /** Every combination of the listed facts' values. */
  function combinations(values: { [K in keyof Case]: readonly Case[K][] }): Case[] {
    const out: Case[] = [];
    for (const status of values.status)
      for (const cancelRequested of values.cancelRequested)
        for (const labels of values.labels)
          for (const holdReason of values.holdReason)
            for (const runFailed of values.runFailed)
              out.push({ status, cancelRequested, labels, holdReason, runFailed });
    return out;
  }

  async function disagreements(
    action: OrderAction,
    cases: Case[],
    guard: (orderId: string) => Promise<boolean>,
  ): Promise<string[]> {
    const wrong: string[] = [];
    for (const c of cases) {
      const { id, facts } = await orderWith(c);
      const model = decide(action, facts).allowed;
      const sql = await guard(id);
      if (model !== sql) wrong.push(`${JSON.stringify(c)}: model ${String(model)}, SQL ${String(sql)}`);
    }
    return wrong;
  }

  const allLabels = Object.keys(labelCases) as LabelCase[];

  it("cancel: requestCancellation's statement", async () => {
    const orders = createOrderRepository(database.db);
    const cases = combinations({
      status: orderStatuses,
      cancelRequested: [false],
      labels: allLabels,
      holdReason: [null],
      runFailed: [false],
    });
    expect(
      await disagreements("cancel", cases, (id) => orders.requestCancellation(id, cancellableStatuses)),
    ).toEqual([]);
  });

  it("hold: placeHold's statement", async () => {
    const holds = createHolds({
      db: database.db,
      publisher: { publish: async () => undefined },
    });
    const cases = combinations({
      status: orderStatuses,
      cancelRequested: [false, true],
      labels: ["none", "unscanned"],
      holdReason: [null, "fulfilment_window", "high_risk"],
      runFailed: [false],
    });
    expect(
      await disagreements("hold", cases, async (id) => (await holds.placeHold(id, "other")) !== null),
    ).toEqual([]);
  });

  it("re-drive: the re-drive's statement", async () => {
    const redrive = createOrderRedrive(database.db);
    const cases = combinations({
      status: orderStatuses,
      cancelRequested: [false, true],
      labels: ["none", "unscanned", "delivered"],
      holdReason: [null],
      runFailed: [false, true],
    });
    expect(
      await disagreements("redrive", cases, async (id) => (await redrive.prepare(id, "test")) !== null),
    ).toEqual([]);
  });

  it("the actions' facts reader (model-check.ts) reads every combination as the model is given it", async () => {
    const cases = combinations({
      status: orderStatuses,
      cancelRequested: [false, true],
      labels: allLabels,
      holdReason: [null, "address"],
      runFailed: [false, true],
    });
    const wrong: string[] = [];
    for (const c of cases) {
      const { id, facts } = await orderWith(c);
      const read = await loadOrderFacts(database.db, id);
      if (JSON.stringify(read) !== JSON.stringify(facts))
        wrong.push(`${JSON.stringify(c)}: read ${JSON.stringify(read)}`);
    }
    expect(wrong).toEqual([]);
    expect(await loadOrderFacts(database.db, "00000000-0000-4000-8000-000000000000")).toBeNull();
  });

  it("docs/order-model.md shows the model as it is (npm run docs:model renders it)", () => {
    const doc = readFileSync(path.join(__dirname, "../../docs/order-model.md"), "utf8");
    const start = "<!-- order-model:start -->\n";
    const end = "<!-- order-model:end -->";
    const rendered = doc.slice(doc.indexOf(start) + start.length, doc.indexOf(end));
    expect(rendered).toBe(renderOrderModel());
  });
});
