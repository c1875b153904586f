import type { WorkflowDependencies } from "../dependencies";
import type { Claim, StepContext } from "./context";
import { bookShipment, type ShipmentOutcome } from "./create-shipment";
import { createStep } from "./saga";

export const checkAddressStepId = "check-address"; // durable Inngest state: never rename it

/**
 * `held`: whether the address hold stood when the step ended. False when another hold (ops', a
 * dispute) was in the way: await-hold-release places the address hold once that one is released.
 * Absent in the outcome of runs begun before it existed (await-hold-release then reads the holds).
 */
export type AddressCheckOutcome = (
  { deliverable: true } | { deliverable: false; message: string; held?: boolean }
) & {
  /**
   * The order's hold when the step ended (null: none), read with the address: await-hold-release's
   * first look. Absent in the outcome of runs begun before it was (their first look is the
   * `check-hold-0` step, memoised or run then).
   */
  hold?: HoldLook | null;
  /**
   * The booking, when this step bought the label too (deliverable, no hold: decision 0195);
   * create-shipment then returns it without a step. Absent otherwise, and in older runs' outcomes.
   */
  shipment?: ShipmentOutcome;
};

/** A look at an order's hold, as `check-hold-<n>` records it. */
export type HoldLook = { reason: string; holdId: string };

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
  return (await placeAddressHold(deps, orderId, message, runId)).outcome;
}

/** holdForAddress, and the hold standing once it is done (null: none). */
async function placeAddressHold(
  deps: WorkflowDependencies,
  orderId: string,
  message: string,
  runId: string,
): Promise<{ outcome: AddressHoldOutcome; hold: HoldLook | null }> {
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
  if (!hold) return { outcome: "unholdable", hold: null };
  const look = { reason: hold.reason, holdId: hold.holdId };
  if (hold.reason !== "address") return { outcome: "blocked", hold: look };
  await deps.messages.addressUndeliverable(orderId, message, hold.holdId);
  return { outcome: "held", hold: look };
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
export const lookAt = (hold: HoldLook | null): HoldLook | null =>
  hold ? { reason: hold.reason, holdId: hold.holdId } : null;

export const checkAddress = createStep({
  id: checkAddressStepId,
  invoke: ({ step, deps, orderId, runId }: StepContext, shipping?: Pick<Claim, "claimId" | "lines">) =>
    step.run(checkAddressStepId, async (): Promise<AddressCheckOutcome> => {
      // The order's hold comes with the address, in one statement: await-hold-release's first look.
      const checked = await deps.shipments.verifyDestinationWithHold(orderId);
      const { verdict } = checked;
      if (!verdict || verdict.deliverable) {
        const hold = checked.hold !== undefined ? checked.hold : lookAt(await deps.holds.current(orderId));
        // Nothing to wait for: the label is bought in this step (create-shipment's work, under its
        // guard and keys; a hold asked meanwhile is seen by its purchase mark, as there).
        if (hold === null && shipping)
          return { deliverable: true, hold, shipment: await bookShipment(deps, orderId, runId, shipping) };
        return { deliverable: true, hold };
      }
      const placed = await placeAddressHold(deps, orderId, verdict.message, runId);
      return {
        deliverable: false,
        message: verdict.message,
        held: placed.outcome === "held",
        hold: placed.hold,
      };
    }),
});
