import type Stripe from "stripe";
import type { OpsNotice } from "../../../src/alerts";
import { createLogger } from "../../../src/logger";
import { disputeHoldOf } from "../../../src/orders/disputed-amount";
import { createRiskEvents } from "../../../src/orders/intake/risk-events";
import { createTimeline } from "../../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../../support/database";

jest.setTimeout(60_000);

/**
 * The dispute's states as Stripe's events bring them, late, twice and out of order, and what each
 * holds of the charge: open and lost hold the disputed amount, an inquiry and a won dispute
 * nothing; a closed dispute never reopens, even on an older event of the same second; the
 * dispute is announced once, however its fields grow between deliveries.
 */
describe("dispute states", () => {
  let database: TestDatabase;
  const alerts: OpsNotice[] = [];
  let orderId: string;
  const intent = "pi_dispute_states";

  beforeAll(async () => {
    database = await createTestDatabase();
    const order = await database.db.order.create({
      data: {
        customerId: "cus_states",
        email: "buyer@example.com",
        currency: "usd",
        total: 6200,
        status: "delivered",
        paymentIntentId: intent,
        shippingAddress: { line1: "1 Main St", city: "Portland", postalCode: "97201", country: "US" },
      },
    });
    orderId = order.id;
    await database.db.shipment.create({
      data: { orderId, carrier: "USPS", trackingNumber: "TRK-STATES", trackingUrl: "https://track.test/x" },
    });
  });
  afterAll(() => database.drop());

  const events = () =>
    createRiskEvents({
      db: database.db,
      stripe: {} as Stripe,
      holds: { placeHold: async () => null, releaseHold: async () => null } as never,
      timeline: createTimeline(database.db),
      alerts: { notify: async (notice) => void alerts.push(notice) },
      logger: createLogger({ level: "silent" }),
    });
  let sequence = 0;
  const event = (type: string, dispute: Partial<Stripe.Dispute> & { id: string }, created: number) =>
    ({
      id: `evt_${++sequence}`,
      type,
      created,
      data: {
        object: {
          object: "dispute",
          amount: 6200,
          currency: "usd",
          reason: "fraudulent",
          payment_intent: intent,
          evidence_details: { due_by: created + 86_400 },
          balance_transactions: [],
          ...dispute,
        },
      },
    }) as unknown as Stripe.Event;
  const held = () => disputeHoldOf(database.db, orderId);
  const statusOf = async (id: string) =>
    (await database.db.dispute.findUniqueOrThrow({ where: { providerId: id } })).status;

  it("open holds the amount; won holds nothing and is not reopened by an older event of its second", async () => {
    const t = 1_790_000_000;
    await events().handle(event("charge.dispute.created", { id: "dp_won", status: "needs_response" }, t));
    expect(await held()).toMatchObject({ amount: 6200, disputes: [{ providerId: "dp_won" }] });

    await events().handle(event("charge.dispute.closed", { id: "dp_won", status: "won" }, t + 60));
    expect(await statusOf("dp_won")).toBe("won");
    expect((await held()).amount).toBe(0);

    // Stripe's events carry seconds: an "updated" of the closing second, delivered after it.
    await events().handle(event("charge.dispute.updated", { id: "dp_won", status: "under_review" }, t + 60));
    await events().handle(event("charge.dispute.created", { id: "dp_won", status: "needs_response" }, t));
    expect(await statusOf("dp_won")).toBe("won");
    expect((await held()).amount).toBe(0);
  });

  it("an inquiry holds nothing; lost holds the amount for good", async () => {
    const t = 1_790_100_000;
    await events().handle(
      event(
        "charge.dispute.created",
        { id: "dp_inquiry", status: "warning_needs_response", amount: 1000 },
        t,
      ),
    );
    expect((await held()).amount).toBe(0);
    await events().handle(
      event("charge.dispute.created", { id: "dp_lost", status: "needs_response", amount: 2000 }, t),
    );
    await events().handle(
      event("charge.dispute.closed", { id: "dp_lost", status: "lost", amount: 2000 }, t + 5),
    );
    await events().handle(
      event("charge.dispute.updated", { id: "dp_lost", status: "under_review", amount: 2000 }, t + 5),
    );
    expect(await statusOf("dp_lost")).toBe("lost");
    expect(await held()).toMatchObject({
      amount: 2000,
      disputes: [{ providerId: "dp_lost", status: "lost" }],
    });
  });

  it("announces a dispute once, keyed by the dispute, though its fields grow between deliveries", async () => {
    const t = 1_790_200_000;
    const created = event("charge.dispute.created", { id: "dp_once", status: "needs_response" }, t);
    await events().handle(created);
    await database.db.emailMessage.create({
      data: {
        idempotencyKey: `late-mail-${orderId}`,
        messageId: `<late-mail-${orderId}@shop.test>`,
        orderId,
        template: "shipped",
        recipient: "buyer@example.com",
        status: "sent",
        sentAt: new Date(),
      },
    });
    await events().handle(created);
    const told = alerts.filter((alert) => JSON.stringify(alert).includes("dp_once"));
    expect(told).toHaveLength(2);
    expect(new Set(told.map((alert) => alert.key))).toEqual(new Set(["dispute-created-dp_once"]));
  });
});
