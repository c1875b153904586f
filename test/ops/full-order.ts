import request from "supertest";
import { adminToken, type WorkflowHarness } from "../support/workflow-harness";

const day = 24 * 3600 * 1000;

/**
 * One order from payment to review request, through the service's HTTP surface where it has one:
 * placed, fulfilled, delivered by EasyPost's signed tracker event, looked at by an admin.
 */
export async function runFullOrder(
  h: WorkflowHarness,
  sku = "LOG-1",
): Promise<{ orderId: string; runId: string }> {
  const { orderId } = await h.createPaidOrder({ items: [{ sku, quantity: 1 }] });
  const eventId = await h.placeOrder(orderId);
  await h.settle(2);

  const { shipment } = await h.order(orderId);
  if (!shipment) throw new Error("the order was not shipped");
  const { delivery } = await h.easyPost.advanceTracker(shipment.trackingNumber, "delivered");
  if (delivery?.responseStatus !== 200)
    throw new Error(`the carrier webhook answered ${delivery?.responseStatus}`);
  await h.engine.drain();
  await h.engine.clock.advance(3 * day);
  await h.engine.drain();

  await request(h.appUrl)
    .get(`/api/orders/${orderId}`)
    .set("Authorization", `Bearer ${adminToken}`)
    .expect(200);
  const [run] = await h.runsOfEvent(eventId);
  if (run?.status !== "Completed") throw new Error(`the order's run ended ${run?.status}`);
  return { orderId, runId: run.run_id };
}

/** An order whose capture Stripe declines: compensated, the customer told, the run failed, ops alerted. */
export async function runDeclinedOrder(h: WorkflowHarness, sku: string): Promise<{ orderId: string }> {
  const { orderId } = await h.createPaidOrder({ items: [{ sku, quantity: 1 }] });
  h.sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
  const eventId = await h.placeOrder(orderId);
  await h.settle();
  const [run] = await h.runsOfEvent(eventId);
  if (run?.status !== "Failed") throw new Error(`the declined order's run ended ${run?.status}`);
  return { orderId };
}
