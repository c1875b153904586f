import type { ShipmentNotice } from "../../notifications/customer-messages";
import type { StepContext } from "./context";

export const sendConfirmationStepId = "send-confirmation";

/** E-mails the tracking link, once (key `shipped-<orderId>`). */
export function sendConfirmation({ step, deps, orderId, runId }: StepContext, shipment: ShipmentNotice) {
  return step.run(sendConfirmationStepId, async () => {
    const sent = await deps.messages.shipped(orderId, shipment);
    await deps.timeline.record(orderId, "confirmation-sent", { ...sent }, runId);
    return sent;
  });
}
