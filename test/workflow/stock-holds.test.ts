import { defined } from "../support/defined";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

/**
 * Stock is held at checkout, through the whole service on the local engine: checkout holds, Stripe's webhook
 * places the order, fulfill-order's reserve step converts the hold, and a paid order that finds no stock is a
 * stock problem for ops, not a failed run.
 */
describe("stock held at checkout (workflow)", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
  });
  afterAll(() => h.close());

  it("hold stock at checkout: the run's reserve step turns the checkout's hold into the reservation, taking no stock twice", async () => {
    await h.addProduct("HELD-1", 3);
    const res = await fetch(`${h.appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus_held",
        email: "held@example.com",
        items: [{ sku: "HELD-1", quantity: 2 }],
      }),
    });
    expect(res.status).toBe(201);
    const { orderId, checkoutSessionId } = (await res.json()) as {
      orderId: string;
      checkoutSessionId: string;
    };
    expect(await h.stockOf("HELD-1")).toBe(1); // held at checkout, before any payment

    const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    expect(completed.deliveries.every((d) => d.status === 200)).toBe(true);
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.reservations).toEqual([
      expect.objectContaining({ sku: "HELD-1", quantity: 2, status: "reserved" }),
    ]);
    expect(await h.db.stockHold.findMany({ where: { orderId } })).toEqual([
      expect.objectContaining({ sku: "HELD-1", quantity: 2, status: "converted" }),
    ]);
    expect(await h.stockOf("HELD-1")).toBe(1);
    expect(defined(order.payment).status).toBe("captured");
  });

  it("hold stock at checkout: a paid order that finds no stock makes the customer whole and alerts ops to a stock problem, not a failed run", async () => {
    await h.addProduct("GONE-1", 0);
    const slackBefore = h.slack.bodies.length;
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_gone",
      items: [{ sku: "GONE-1", quantity: 1 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run).toMatchObject({
      status: "Completed",
      output: { orderId, outcome: "cancelled_out_of_stock" },
    });
    expect((await h.order(orderId)).status).toBe("cancelled_out_of_stock");
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(h.mailsTo(/could not fulfil/).length).toBeGreaterThanOrEqual(1);

    const alerts = h.slack.bodies.slice(slackBefore).map((body) => JSON.stringify(body));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toContain("Stock problem");
    expect(alerts[0]).toContain(orderId);
    expect(alerts[0]).toContain("Not a failed run");
  });
});
