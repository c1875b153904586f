import type { OpsNotice } from "../../src/alerts";
import { AppError } from "../../src/errors";
import type { ExchangeCheckoutView } from "../../src/payments/exchange-checkout";
import type { PaymentGateway } from "../../src/payments/payment-gateway";
import { createReturnRecords } from "../../src/returns/return-records";
import { createReturnRunWork } from "../../src/returns/return-work";
import { createTimeline } from "../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../support/database";

jest.setTimeout(60_000);

/**
 * A Checkout payment of an exchange's difference that lands after the exchange was closed unpaid
 * (an async payment method that settled late, a webhook delayed past EXCHANGE_PAYMENT_WINDOW) is
 * not the exchange's charge: it is refunded in full, once (key exchange-checkout-refund-<id>), and
 * ops hear of it once, however often Stripe delivers it. One still awaited is the charge.
 */
describe("a late payment for an exchange", () => {
  let database: TestDatabase;
  const refunds: [string, string][] = [];
  const alerts: OpsNotice[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    for (const [sku, unitPrice] of [
      ["LATE-1", 2500],
      ["LATE-1XL", 3000],
    ] as const)
      await database.db.product.create({
        data: { sku, name: sku, unitPrice, currency: "usd", stockOnHand: 5 },
      });
  });
  afterAll(() => database.drop());

  let disputedIntents = new Set<string>();
  const work = () =>
    createReturnRunWork({
      db: database.db,
      records: createReturnRecords(database.db),
      labels: {} as never,
      refunds: {} as never,
      payments: {
        chargeOffSession: () => Promise.reject(new Error("not in this test")),
        refundInFull: async (paymentIntentId: string, key: string) => {
          if (disputedIntents.has(paymentIntentId))
            throw new AppError("charge_disputed", "Charge has been charged back; cannot issue a refund.");
          refunds.push([paymentIntentId, key]);
          return { paymentIntentId, refundId: `re_${key}`, amountRefunded: 500 };
        },
      } satisfies Pick<PaymentGateway, "chargeOffSession" | "refundInFull">,
      sender: {} as never,
      timeline: createTimeline(database.db),
      alerts: { notify: async (notice) => void alerts.push(notice) },
      fee: { kind: "amount", amount: 0 },
      orderUrl: (id) => `http://shop.test/orders/${id}`,
      trackUrl: (code) => `http://track.test/${code}`,
    });

  async function exchangeReturn(chargeStatus: "unpaid" | "awaiting_payment", status: "received" | "closed") {
    const order = await database.db.order.create({
      data: {
        customerId: "cus_late",
        email: "buyer@example.com",
        currency: "usd",
        total: 2500,
        status: "delivered",
        shippingAddress: { line1: "1 Main St", city: "Portland", postalCode: "97201", country: "US" },
        lines: { create: [{ sku: "LATE-1", name: "LATE-1", unitPrice: 2500, quantity: 1 }] },
      },
    });
    const row = await database.db.return.create({
      data: {
        orderId: order.id,
        reason: "wrong_item",
        requestedBy: "customer",
        status,
        exchangeChargeStatus: chargeStatus,
        exchangeChargeAmount: 500,
        exchangeCheckoutSessionId: `cs_${order.id}`,
        lines: {
          create: [
            { sku: "LATE-1", quantity: 1, unitPrice: 2500, exchangeSku: "LATE-1XL", exchangeUnitPrice: 3000 },
          ],
        },
      },
    });
    const paid: ExchangeCheckoutView = {
      id: `cs_${order.id}`,
      url: null,
      status: "complete",
      paid: true,
      paymentIntentId: `pi_${order.id}`,
      amount: 500,
      currency: "usd",
      returnId: row.id,
    };
    return { orderId: order.id, returnId: row.id, paid };
  }

  const kindsOf = async (orderId: string) =>
    (await database.db.orderTimelineEntry.findMany({ where: { orderId } })).map((entry) => entry.kind);

  it("closed unpaid: the payment is refunded once and ops told once, however often it is delivered", async () => {
    const { orderId, returnId, paid } = await exchangeReturn("unpaid", "closed");
    const first = await work().settleExchangeCheckout(paid, null);
    const second = await work().settleExchangeCheckout(paid, null);

    expect(first).toEqual({ outcome: "refunded" });
    expect(second.outcome).not.toBe("charged");
    expect(refunds.filter(([intent]) => intent === paid.paymentIntentId)).toEqual([
      [paid.paymentIntentId, `exchange-checkout-refund-${returnId}`],
    ]);
    const row = await database.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row).toMatchObject({
      exchangeChargeStatus: "refunded",
      exchangeChargeIntentId: paid.paymentIntentId,
      exchangeChargeRefundId: `re_exchange-checkout-refund-${returnId}`,
      exchangeTrackingNumber: null,
    });
    expect((await kindsOf(orderId)).filter((kind) => kind === "exchange-charge-refunded")).toHaveLength(1);
    expect(await kindsOf(orderId)).not.toContain("exchange-charged");
    const told = alerts.filter((alert) => alert.key === `exchange-late-payment-${returnId}`);
    expect(told).toHaveLength(1);
  });

  it("received and unpaid (the run closing it): refunded, never kept as the charge", async () => {
    const { returnId, paid } = await exchangeReturn("unpaid", "received");
    expect(await work().settleExchangeCheckout(paid, null)).toEqual({ outcome: "refunded" });
    expect(
      (await database.db.return.findUniqueOrThrow({ where: { id: returnId } })).exchangeChargeStatus,
    ).toBe("refunded");
  });

  it("still awaited: the payment is the exchange's charge, recorded once", async () => {
    const { orderId, returnId, paid } = await exchangeReturn("awaiting_payment", "received");
    const first = await work().settleExchangeCheckout(paid, null);
    const second = await work().settleExchangeCheckout(paid, null);
    expect(first).toMatchObject({ outcome: "charged", first: true, returnId, orderId });
    expect(second).toMatchObject({ outcome: "charged", first: false });
    expect(refunds.filter(([intent]) => intent === paid.paymentIntentId)).toEqual([]);
    const row = await database.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(row).toMatchObject({
      exchangeChargeStatus: "charged",
      exchangeChargeIntentId: paid.paymentIntentId,
    });
  });

  it("a late payment charged back: no refund tried again and again, ops told once what to do", async () => {
    const { orderId, returnId, paid } = await exchangeReturn("unpaid", "closed");
    disputedIntents = new Set([paid.paymentIntentId as string]);
    expect(await work().settleExchangeCheckout(paid, null)).toEqual({ outcome: "not-ours" });
    expect(await work().settleExchangeCheckout(paid, null)).toEqual({ outcome: "not-ours" });
    expect(refunds.filter(([intent]) => intent === paid.paymentIntentId)).toEqual([]);
    expect(
      (await database.db.return.findUniqueOrThrow({ where: { id: returnId } })).exchangeChargeStatus,
    ).toBe("unpaid");
    expect(await kindsOf(orderId)).toContain("return-refund-withheld");
    const told = alerts.filter((alert) => alert.key === `refund-refused-disputed-${paid.paymentIntentId}`);
    expect(told.length).toBeGreaterThan(0);
    expect(new Set(told.map((alert) => alert.key)).size).toBe(1);
    expect(JSON.stringify(told[0])).toContain("Stripe Dashboard");
  });
});
