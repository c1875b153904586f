import type { ShipmentNotice } from "../../notifications/customer-messages";
import { createStep } from "./saga";

export const sendConfirmationStepId = "send-confirmation";

/** E-mails the tracking links of every parcel, in one e-mail, once (key `shipped-<orderId>`). */
export const sendConfirmation = createStep({
  id: sendConfirmationStepId,
  invoke: ({ step, deps, orderId, runId }, parcels: readonly ShipmentNotice[]) =>
    step.run(sendConfirmationStepId, async () => {
      // The `confirmation-sent` entry is written with the e-mail's outcome, in its statement.
      return deps.messages.shipped(orderId, parcels, { kind: "confirmation-sent", runId });
    }),
});
