import { Client } from "pg";
import request from "supertest";
import { orderCancelled } from "../../src/events/contracts";
import { eventually, gate } from "../support/eventually";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * Inngest cancels a run at once and starts cleanup-cancelled-order while the step in flight keeps going. Each
 * test holds one side-effect step's external call open (the Stripe stand-in's and the EasyPost stand-in's
 * held answers), lands the cancel inside that delay, lets the cleanup finish, then lets the step finish too:
 * the order must end consistent whatever the order of those events. reserve-stock has no external call: a row
 * lock holds its transaction open instead (both orders of fence and reservation:
 * test/inventory/reservation-guard.test.ts).
 */
describe("a cancel that lands while a step is in flight", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const cancel = (orderId: string) =>
    request(h.appUrl)
      .post(`/api/orders/${orderId}/cancel`)
      .set("Authorization", `Bearer ${adminToken}`)
      .send({ reason: "changed my mind" })
      .expect(202);
  const statusOf = async (orderId: string) => (await h.order(orderId)).status;
  const refundsOf = (paymentIntentId: string) =>
    h
      .stripeCalls("refunds.create")
      .filter(
        (call) => call.status === 200 && !call.replayed && call.params.payment_intent === paymentIntentId,
      );
  const kindsOf = async (orderId: string) => (await h.order(orderId)).timeline.map((entry) => entry.kind);

  it("charge-card: the capture's answer arrives after the cleanup refunded: refunded once, and the record says refunded", async () => {
    await h.addProduct("INFLIGHT-CHARGE", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_inflight_charge",
      items: [{ sku: "INFLIGHT-CHARGE", quantity: 2 }],
    });
    const answer = gate();
    // Stripe captures, then holds its answer: the money is taken, the step has not heard yet.
    h.sandbox.injectFailure("payment_intents.capture", {
      kind: "hang",
      afterProcessing: true,
      until: answer.promise,
    });
    const eventId = await h.placeOrder(orderId);
    await eventually(
      "captured at Stripe",
      () => h.sandbox.paymentIntent(paymentIntentId)?.status === "succeeded",
    );

    await cancel(orderId);
    await eventually("cleanup done", async () => (await statusOf(orderId)) === "cancelled");
    answer.open();
    await h.settle();

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.payment).toMatchObject({ status: "refunded", amountCaptured: 5000, amountRefunded: 5000 });
    expect(refundsOf(paymentIntentId)).toHaveLength(1);
    expect(await h.stockOf("INFLIGHT-CHARGE")).toBe(4);
    expect(order.shipment).toBeNull();
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds).toContain("payment-refunded");
    // The late answer is recorded as what it was, never as a capture that stands.
    expect(kinds.slice(kinds.indexOf("cancelled"))).not.toContain("payment-captured");
    expect(h.mailsTo(/has been cancelled/).filter((m) => m.text?.includes("refunded"))).toHaveLength(1);
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
  });

  it("charge-card: the capture reaches Stripe only after the cleanup voided the authorization: nothing is taken", async () => {
    await h.addProduct("INFLIGHT-VOID", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_inflight_void",
      items: [{ sku: "INFLIGHT-VOID", quantity: 1 }],
    });
    const arrival = gate();
    // The request is in flight but Stripe has not processed it yet.
    h.sandbox.injectFailure("payment_intents.capture", { kind: "hang", until: arrival.promise });
    await h.placeOrder(orderId);
    await eventually("capture sent", () =>
      h.stripeCalls("payment_intents.capture").some((call) => call.idempotencyKey === `capture-${orderId}`),
    );

    await cancel(orderId);
    await eventually("cleanup done", async () => (await statusOf(orderId)) === "cancelled");
    arrival.open();
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(order.payment?.status).toBe("voided");
    expect(refundsOf(paymentIntentId)).toHaveLength(0);
    expect(await h.stockOf("INFLIGHT-VOID")).toBe(4);
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
  });

  it("create-shipment: the carrier's answer arrives after the cleanup: the label is voided with the carrier, nothing recorded as shipped", async () => {
    await h.addProduct("INFLIGHT-SHIP", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_inflight_ship",
      items: [{ sku: "INFLIGHT-SHIP", quantity: 1 }],
    });
    const labelOf = () => h.easyPost.shipments().find((s) => s.reference === `order-${orderId}`);
    const answer = gate();
    // The label is bought at EasyPost; its answer stays on the wire until the cleanup is done.
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    const eventId = await h.placeOrder(orderId);
    await eventually("label bought at the carrier", () => labelOf()?.postage_label != null);

    await cancel(orderId);
    await eventually("cleanup done", async () => (await statusOf(orderId)) === "cancelled");
    answer.open();
    await h.settle();

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.shipment).toBeNull();
    // Voided as EasyPost voids a label: a refund submitted, decided by the carrier later.
    expect(labelOf()?.refund_status).toBe("submitted");
    expect(order.payment).toMatchObject({ status: "refunded", amountRefunded: 2500 });
    expect(refundsOf(paymentIntentId)).toHaveLength(1);
    expect(await h.stockOf("INFLIGHT-SHIP")).toBe(4);
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds.slice(kinds.indexOf("cancelled"))).not.toContain("shipment-booked");
    expect(kinds).toContain("shipment-voided");
  });

  it("reserve-stock: the reservation's transaction is held open when the cancel arrives: the stock still comes back", async () => {
    await h.addProduct("INFLIGHT-STOCK", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_inflight_stock",
      items: [{ sku: "INFLIGHT-STOCK", quantity: 3 }],
    });
    // reserve-stock has no external call; another session holding the product row keeps the
    // step's transaction open instead (it holds the order row meanwhile).
    const blocker = new Client({ connectionString: h.database.url });
    const monitor = new Client({ connectionString: h.database.url });
    await blocker.connect();
    await monitor.connect();
    // Asked outside any transaction: inside one, pg_stat_activity is a snapshot taken at first use.
    const lockWaiters = async (): Promise<number> =>
      (
        await monitor.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`,
        )
      ).rows[0]?.n ?? 0;
    try {
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM products WHERE sku = 'INFLIGHT-STOCK' FOR UPDATE`);
      const eventId = await h.placeOrder(orderId);
      await eventually("reservation waiting", async () => (await lockWaiters()) >= 1);

      // Inngest's cancel does not wait for the step (sent as the event: the admin API's own
      // UPDATE would queue behind the step's row lock).
      const event = orderCancelled.create({ orderId });
      await h.send(event.name, event.data);
      await eventually("run cancelled", async () =>
        (await h.runsOfEvent(eventId)).some((run) => run.status === "Cancelled"),
      );
      await eventually("cleanup queued behind the reservation", async () => (await lockWaiters()) >= 2);
      await blocker.query("COMMIT");
    } finally {
      await blocker.end();
      await monitor.end();
    }
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(await h.stockOf("INFLIGHT-STOCK")).toBe(4);
    expect(order.reservations.filter((r) => r.status === "reserved")).toHaveLength(0);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
  });

  it("cleanup refund path: a paid order cancelled while capture is retried is refunded in full from Stripe's state", async () => {
    await h.addProduct("CLEANUP-REFUND", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_cleanup_refund",
      items: [{ sku: "CLEANUP-REFUND", quantity: 1 }],
      outcome: "paid",
    });
    // The money was taken at checkout (automatic capture); the run then waits out a Stripe error.
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" });
    const eventId = await h.placeOrder(orderId);
    await h.engine.drain();
    expect(await kindsOf(orderId)).toContain("stock-reserved");

    await cancel(orderId);
    await h.settle();

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.payment).toMatchObject({ status: "refunded", amountCaptured: 2500, amountRefunded: 2500 });
    expect(refundsOf(paymentIntentId)).toHaveLength(1);
    expect(await h.stockOf("CLEANUP-REFUND")).toBe(4);
    const [mail] = h.smtp.accepted.filter((m) => m.messageId === `<cancelled-${orderId}@shop.example>`);
    expect(mail?.text).toContain("We have refunded $25.00");
  });
});
