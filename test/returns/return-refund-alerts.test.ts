import type { OpsNotice } from "../../src/alerts";
import { AppError } from "../../src/errors";
import type { RefundRequest } from "../../src/orders/refund-order";
import { createReturnRecords } from "../../src/returns/return-records";
import { createReturnWork } from "../../src/inngest/steps/return-work";
import { createTimeline } from "../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../support/database";

jest.setTimeout(60_000);

/**
 * The return's refund step retried (its first attempt failed after telling ops): ops are told once
 * per return, by the alert's key, though what is left to refund changed in between; and a
 * charged-back payment withholds the refund rather than failing the run.
 */
describe("the return refund's alerts", () => {
  let database: TestDatabase;
  const alerts: OpsNotice[] = [];
  let answers: ((request: RefundRequest) => Promise<never> | Promise<ReturnType<typeof refunded>>)[] = [];
  const refunded = (request: RefundRequest) => ({
    refundId: request.refundId ?? "r",
    orderId: request.orderId,
    amount: request.amount ?? 0,
    currency: "usd",
    status: "succeeded" as const,
    providerId: "re_1",
    captured: 5000,
    refunded: 5000,
    refundable: 0,
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.product.create({
      data: { sku: "RA-1", name: "RA-1", unitPrice: 2500, currency: "usd", stockOnHand: 5 },
    });
  });
  afterAll(() => database.drop());

  const work = () =>
    createReturnWork({
      db: database.db,
      records: createReturnRecords(database.db),
      labels: {} as never,
      refunds: {
        refund: (request) => {
          const next = answers.shift();
          if (!next) throw new Error("no answer left");
          return next(request);
        },
      },
      payments: {} as never,
      sender: {} as never,
      timeline: createTimeline(database.db),
      alerts: { notify: async (notice) => void alerts.push(notice) },
      fee: { kind: "amount", amount: 0 },
      orderUrl: (id) => `http://shop.test/orders/${id}`,
      trackUrl: (code) => `http://track.test/${code}`,
    });

  async function receivedReturn() {
    const order = await database.db.order.create({
      data: {
        customerId: "cus_ra",
        email: "buyer@example.com",
        currency: "usd",
        total: 5000,
        status: "delivered",
        shippingAddress: { line1: "1 Main St", city: "Portland", postalCode: "97201", country: "US" },
        lines: { create: [{ sku: "RA-1", name: "RA-1", unitPrice: 2500, quantity: 2 }] },
      },
    });
    const row = await database.db.return.create({
      data: {
        orderId: order.id,
        reason: "other",
        requestedBy: "admin-api",
        status: "received",
        condition: "resellable",
        lines: { create: [{ sku: "RA-1", quantity: 2, unitPrice: 2500 }] },
      },
    });
    return { orderId: order.id, returnId: row.id };
  }
  const exceeds = (refundable: number) => () =>
    Promise.reject(
      new AppError("refund_exceeds_captured", "exceeds", { details: { refundable, requested: 5000 } }),
    );

  it("refunded by hand meanwhile, the step retried: one alert key for the return, what is left refunded", async () => {
    const { returnId } = await receivedReturn();
    // First attempt: 1500 left, its refund then fails (an outage); the retry finds 1000 left.
    answers = [
      exceeds(1500),
      () => Promise.reject(new Error("Stripe is down")),
      exceeds(1000),
      async (r) => refunded(r),
    ];
    await expect(work().refund(returnId, "run-1")).rejects.toThrow("Stripe is down");
    const outcome = await work().refund(returnId, "run-1");
    expect(outcome).toMatchObject({ amount: 1000 });
    const told = alerts.filter((alert) => alert.title.startsWith("Return refund exceeds"));
    expect(told).toHaveLength(2);
    expect(new Set(told.map((alert) => alert.key))).toEqual(new Set([`return-refund-short-${returnId}`]));
  });

  it("a charged-back payment: the refund withheld, recorded, the run not failed", async () => {
    const { orderId, returnId } = await receivedReturn();
    answers = [
      () =>
        Promise.reject(
          new AppError("charge_disputed", "disputed", { details: { disputes: ["dp_1"], disputed: 5000 } }),
        ),
    ];
    expect(await work().refund(returnId, "run-2")).toEqual({
      amount: 0,
      fee: 0,
      refundId: null,
      withheld: true,
    });
    const row = await database.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.refundAmount).toBe(0);
    expect(row.refundedAt).not.toBeNull();
    const entries = await database.db.orderTimelineEntry.findMany({
      where: { orderId, kind: "return-refund-withheld" },
    });
    expect(entries.map((entry) => entry.detail)).toEqual([
      { returnId, due: 5000, fee: 0, disputes: ["dp_1"] },
    ]);
  });

  const refusedAtStripe = (code: string) => () =>
    Promise.reject(
      new AppError("order_not_refundable", "already refunded at Stripe", {
        details: {
          refusedByStripe: code,
          refundedAtStripe: 5000,
          refunded: 5000,
          captured: 5000,
          refundable: 0,
        },
      }),
    );

  it("refused by Stripe as already refunded (the Dashboard), the step retried: settled at 0, one timeline entry, one alert key", async () => {
    const { orderId, returnId } = await receivedReturn();
    const before = alerts.length;
    answers = [refusedAtStripe("charge_already_refunded"), refusedAtStripe("charge_already_refunded")];
    const first = await work().refund(returnId, "run-3");
    expect(await work().refund(returnId, "run-3")).toEqual(first);
    expect(first).toEqual({ amount: 0, fee: 0, refundId: null });
    const row = await database.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row.refundAmount).toBe(0);
    expect(row.refundedAt).not.toBeNull();
    const entries = await database.db.orderTimelineEntry.findMany({
      where: { orderId, kind: "return-refunded-at-stripe" },
    });
    expect(entries.map((entry) => entry.detail)).toEqual([
      {
        returnId,
        due: 5000,
        fee: 0,
        refundedAtStripe: 5000,
        captured: 5000,
        stripeCode: "charge_already_refunded",
      },
    ]);
    const told = alerts.slice(before);
    expect(new Set(told.map((alert) => alert.key))).toEqual(
      new Set([`return-refunded-at-stripe-${returnId}`]),
    );
  });

  it("what the records left, refused by Stripe as too large: settled at Stripe's answer, never asked a third time", async () => {
    const { orderId, returnId } = await receivedReturn();
    answers = [exceeds(1500), refusedAtStripe("amount_too_large")];
    expect(await work().refund(returnId, "run-4")).toEqual({ amount: 0, fee: 0, refundId: null });
    expect(answers).toHaveLength(0);
    const kinds = await database.db.orderTimelineEntry.findMany({ where: { orderId } });
    expect(kinds.map((entry) => entry.kind)).toEqual(["return-refunded-at-stripe"]);
  });
});
