import request from "supertest";
import { findOrderDetails } from "../../src/orders/order-details";
import { decide, decideReturn, factsOfDetails, type OrderAction } from "../../src/shared/order-model";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * Every action of the admin API asks the one order model first (src/orders/model-check.ts): a
 * refusal carries the model's code and its reason, word for word, with the status it always had.
 * The orders are written straight into the database in the state each case needs; no run moves them.
 */
describe("the admin API's actions ask the order model", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const apiPost = (path: string, body: Record<string, unknown> = {}) =>
    request(h.appUrl).post(path).set("Authorization", `Bearer ${adminToken}`).send(body);

  let tracking = 0;
  async function orderIn(
    status: "paid" | "shipped" | "delivered" | "cancelled",
    options: { label?: boolean; captured?: number; cancelRequested?: boolean } = {},
  ) {
    const order = await h.db.order.create({
      data: {
        customerId: "cus_model_check",
        email: "model-check@example.com",
        currency: "usd",
        total: 1000,
        status,
        paymentIntentId: `pi_model_check_${(tracking += 1)}`,
        cancelRequestedAt: options.cancelRequested ? new Date() : null,
      },
    });
    if (options.captured !== undefined)
      await h.db.payment.create({
        data: {
          orderId: order.id,
          provider: "stripe",
          providerId: `pi_model_check_${tracking}`,
          status: "captured",
          currency: "usd",
          amountAuthorized: options.captured,
          amountCaptured: options.captured,
        },
      });
    const shipment = options.label
      ? await h.db.shipment.create({
          data: {
            orderId: order.id,
            parcelNumber: 1,
            carrier: "USPS",
            trackingNumber: `MODELCHECK${tracking}`,
            trackingUrl: "https://track.example",
            trackerStatus: status === "delivered" ? "delivered" : "in_transit",
            status: status === "delivered" ? "delivered" : "booked",
          },
        })
      : null;
    return { orderId: order.id, shipmentId: shipment?.id ?? "" };
  }

  /** The model's reason for refusing `action` on the order as the admin view reads it. */
  async function modelWhy(orderId: string, action: OrderAction): Promise<string> {
    const details = await findOrderDetails(h.db, orderId);
    if (!details) throw new Error(`no order ${orderId}`);
    const verdict = decide(action, factsOfDetails(details));
    if (verdict.allowed) throw new Error(`the model allows ${action} on ${orderId}`);
    return verdict.why;
  }

  const cases: {
    action: OrderAction;
    order: () => ReturnType<typeof orderIn>;
    post: (o: { orderId: string; shipmentId: string }) => request.Test;
    status: number;
    code: string;
  }[] = [
    {
      action: "cancel",
      order: () => orderIn("delivered", { label: true }),
      post: ({ orderId }) => apiPost(`/api/orders/${orderId}/cancel`),
      status: 409,
      code: "order_not_cancellable",
    },
    {
      action: "cancel",
      order: () => orderIn("shipped", { label: true }),
      post: ({ orderId }) => apiPost(`/api/orders/${orderId}/cancel`),
      status: 409,
      code: "order_not_cancellable",
    },
    {
      action: "hold",
      order: () => orderIn("shipped", { label: true }),
      post: ({ orderId }) => apiPost(`/api/orders/${orderId}/hold`, { reason: "high_risk" }),
      status: 409,
      code: "order_not_holdable",
    },
    {
      action: "release",
      order: () => orderIn("paid"),
      post: ({ orderId }) => apiPost(`/api/orders/${orderId}/release-hold`),
      status: 409,
      code: "order_not_held",
    },
    {
      action: "redrive",
      order: () => orderIn("shipped", { label: true }),
      post: ({ orderId }) => apiPost(`/api/orders/${orderId}/redrive`),
      status: 409,
      code: "order_not_redrivable",
    },
    {
      action: "reship",
      order: () => orderIn("shipped", { label: true, cancelRequested: true }),
      post: ({ orderId, shipmentId }) => apiPost(`/api/orders/${orderId}/shipments/${shipmentId}/reship`),
      status: 409,
      code: "order_not_shipped",
    },
    {
      action: "refund",
      order: () => orderIn("paid"),
      post: ({ orderId }) => apiPost(`/api/orders/${orderId}/refund`, { amount: 100 }),
      status: 409,
      code: "order_not_refundable",
    },
  ];

  it.each(cases.map((c, index) => [`${c.action} #${index}`, c] as const))(
    "%s: refused with the model's code and reason, nothing written",
    async (_name, c) => {
      const order = await c.order();
      const why = await modelWhy(order.orderId, c.action);
      const before = await h.db.orderTimelineEntry.count({ where: { orderId: order.orderId } });
      const res = await c.post(order).expect(c.status);
      expect(res.body.error.code).toBe(c.code);
      expect(res.body.error.message).toContain(why);
      expect(await h.db.orderTimelineEntry.count({ where: { orderId: order.orderId } })).toBe(before);
    },
  );

  it("return actions: refused with the return model's reason", async () => {
    const { orderId } = await orderIn("delivered", { label: true });
    const closed = await h.db.return.create({
      data: { orderId, status: "closed", reason: "changed mind", requestedBy: "customer" },
    });
    const why = (action: "approve" | "receive" | "reject" | "close") => {
      const verdict = decideReturn(action, { status: "closed", refunded: false, exchangeChargeStatus: null });
      if (verdict.allowed) throw new Error("the model allows it");
      return verdict.why;
    };
    for (const action of ["approve", "reject", "close"] as const) {
      const res = await apiPost(`/api/returns/${closed.id}/${action}`).expect(409);
      expect(res.body.error.code).toBe("return_not_actionable");
      expect(res.body.error.message).toContain(why(action));
    }
    const received = await apiPost(`/api/returns/${closed.id}/receive`, { condition: "resellable" }).expect(
      409,
    );
    expect(received.body.error.message).toContain(why("receive"));
  });
});
