import type { WorkflowDependencies } from "../dependencies";
import type { StepContext } from "./context";
import { createStep } from "./saga";

export const checkAddressStepId = "check-address"; // durable Inngest state: never rename it

/**
 * `held`: whether the address hold stood when the step ended. False when another hold (ops', a
 * dispute) was in the way: await-hold-release places the address hold once that one is released.
 * Absent in the outcome of runs begun before it existed (await-hold-release then reads the holds).
 */
export type AddressCheckOutcome =
  { deliverable: true } | { deliverable: false; message: string; held?: boolean };

/**
 * What became of an undeliverable order's address hold: `held` (placed now, or already standing),
 * `blocked` (another hold is in the way: one hold at a time per order), `unholdable` (label bought,
 * order ended: nothing to stop any more).
 */
export type AddressHoldOutcome = "held" | "blocked" | "unholdable";

/**
 * Puts the order on its `address` hold with the carrier's message; only the call that places it
 * records the timeline entry, flags the order and tells ops, so a retry (or the later placement
 * after another hold) tells them once. The customer's e-mail is keyed by the hold
 * (`address-<orderId>-<holdId>`): a repeat sends nothing new.
 */
export async function holdForAddress(
  deps: WorkflowDependencies,
  orderId: string,
  message: string,
  runId: string,
): Promise<AddressHoldOutcome> {
  const placed = await deps.holds.placeHold(orderId, "address", { note: message, by: "address-check" });
  const hold = placed ?? (await deps.holds.current(orderId));
  if (placed) {
    await deps.timeline.record(orderId, "address-undeliverable", { message }, runId);
    await deps.orders.flagForOps(orderId, `the carrier cannot deliver to the address: ${message}`);
    await deps.alerts.notify({
      title: "Order held: the carrier cannot deliver to its address",
      runId,
      fields: {
        orderId,
        carrierMessage: message,
        action: "The customer was e-mailed a link to correct it; release the hold once it is right",
      },
    });
  }
  if (!hold) return "unholdable";
  if (hold.reason !== "address") return "blocked";
  await deps.messages.addressUndeliverable(orderId, message, hold.holdId);
  return "held";
}

/**
 * Asks the carrier (EasyPost's address verification) whether it can deliver to the order's address
 * before a label is bought. Undeliverable: the order is put on an `address` hold with the carrier's
 * message, ops are told once, and the customer gets a signed link to correct it; the correction
 * releases the hold (src/orders/correct-address.ts) and await-hold-release goes on. An order held
 * for another reason cannot take the address hold yet: await-hold-release places it once that hold
 * is released, so the parcel never goes to the address the carrier rejected. Idempotent: a retry
 * finds the hold in place and the e-mail's key sent.
 */
export const checkAddress = createStep({
  id: checkAddressStepId,
  invoke: ({ step, deps, orderId, runId }: StepContext) =>
    step.run(checkAddressStepId, async (): Promise<AddressCheckOutcome> => {
      const verdict = await deps.shipments.verifyDestination(orderId);
      if (!verdict || verdict.deliverable) return { deliverable: true };
      const held = await holdForAddress(deps, orderId, verdict.message, runId);
      return { deliverable: false, message: verdict.message, held: held === "held" };
    }),
});
