import type { StepContext } from "./context";
import { createStep } from "./saga";

export const checkAddressStepId = "check-address"; // durable Inngest state: never rename it

export type AddressCheckOutcome = { deliverable: true } | { deliverable: false; message: string };

/**
 * Asks the carrier (EasyPost's address verification) whether it can deliver to the order's address
 * before a label is bought. Undeliverable: the order is put on an `address` hold with the carrier's
 * message, ops are told once, and the customer gets a signed link to correct it; the correction
 * releases the hold (src/orders/correct-address.ts) and await-hold-release goes on. Idempotent: a
 * retry finds the hold in place and the e-mail's key (`address-<orderId>-<holdId>`) sent.
 */
export const checkAddress = createStep({
  id: checkAddressStepId,
  invoke: ({ step, deps, orderId, runId }: StepContext) =>
    step.run(checkAddressStepId, async (): Promise<AddressCheckOutcome> => {
      const verdict = await deps.shipments.verifyDestination(orderId);
      if (!verdict || verdict.deliverable) return { deliverable: true };
      const placed = await deps.holds.placeHold(orderId, "address", {
        note: verdict.message,
        by: "address-check",
      });
      const hold = placed ?? (await deps.holds.current(orderId));
      if (placed) {
        await deps.timeline.record(orderId, "address-undeliverable", { message: verdict.message }, runId);
        await deps.orders.flagForOps(
          orderId,
          `the carrier cannot deliver to the address: ${verdict.message}`,
        );
        await deps.alerts.notify({
          title: "Order held: the carrier cannot deliver to its address",
          runId,
          fields: {
            orderId,
            carrierMessage: verdict.message,
            action: "The customer was e-mailed a link to correct it; release the hold once it is right",
          },
        });
      }
      if (hold?.reason === "address") {
        await deps.messages.addressUndeliverable(orderId, verdict.message, hold.holdId);
      }
      return { deliverable: false, message: verdict.message };
    }),
});
