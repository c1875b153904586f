import { holdReleased } from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";
import { durationMs } from "../../shared/duration";
import { holdForAddress, lookAt, type AddressCheckOutcome, type AddressHoldOutcome } from "./check-address";
import type { StepContext } from "./context";
import { createStep, defineUndo } from "./saga";

// Durable Inngest state: never rename these.
export const fulfilmentHoldStepId = "end-fulfilment-hold";
export const awaitHoldReleaseStepId = "await-hold-release";
export const liftHoldStepId = "lift-hold";
/** `hold-address-<look>`: the address hold placed once the hold in its way is released. */
export const holdAddressStepId = (look: number) => `hold-address-${look}`;

/**
 * How long one wait for a release lasts before the hold is read again. A release sent in the
 * moment between the read and the wait's start is not seen by the wait (Inngest matches only
 * events that arrive while it waits), so the re-read bounds that case to this delay.
 */
export const holdRecheckEvery = "6h";
/** 200 waits of 6 hours: 50 days on hold, then ops are asked to decide. */
export const maxHoldWaits = 200;

const waitForRelease = (ctx: StepContext, id: string, timeout: string) =>
  ctx.step.waitForEvent(id, {
    event: holdReleased,
    timeout,
    if: "async.data.orderId == event.data.orderId",
  });

/**
 * Undoes a hold on an order that will not be fulfilled (cancelled while held, say), so the console
 * does not show an ended order as held. Idempotent: a repeat finds no hold.
 */
export const liftHold = defineUndo(liftHoldStepId, ({ step, deps, orderId }) =>
  step.run(liftHoldStepId, async () => {
    const lifted = await deps.holds.releaseHold(orderId, { by: "workflow" });
    return lifted ? lifted.reason : null;
  }),
);

export type FulfilmentHoldOutcome = { waited: false } | { waited: true; releasedEarly: boolean };

/** Old step ids of the window (three steps), kept for the runs begun before it was one wait. */
export const placeFulfilmentHoldStepId = "place-fulfilment-hold";

/**
 * Puts the order on its `fulfilment_window` hold when FULFILMENT_HOLD is on, inside reserve-stock's
 * step (no step of its own). True when the window is on (whether this call placed the hold or a
 * retry finds it, or another hold, standing: placeHold changes nothing then).
 */
export async function placeWindowHold(
  deps: Pick<WorkflowDependencies, "holds" | "settings">,
  orderId: string,
): Promise<boolean> {
  if (durationMs(deps.settings.fulfilmentHold) === 0) return false;
  await deps.holds.placeHold(orderId, "fulfilment_window", { by: "workflow" });
  return true;
}

/**
 * Ends the order's `fulfilment_window` hold, inside charge-card's step before the capture (no step
 * of its own); a hold ops put in its place stays. Idempotent: a repeat finds no window hold.
 */
export async function endWindowHold(
  deps: Pick<WorkflowDependencies, "holds" | "settings">,
  orderId: string,
): Promise<void> {
  if (durationMs(deps.settings.fulfilmentHold) === 0) return;
  await deps.holds.releaseHold(orderId, { by: "workflow", onlyReason: "fulfilment_window" });
}

/**
 * FULFILMENT_HOLD: the order waits, placed on a `fulfilment_window` hold, before its card is
 * captured and its label bought, so a cancel inside the window takes no money and buys no label.
 * A durable waitForEvent with the window as its timeout, not a timer in the process: the run holds
 * no concurrency slot while it waits, so a customer's other orders go on. Ops may release it early
 * (the event ends the wait) or replace it with a hold of their own (await-hold-release then waits).
 * "0s" adds no step at all.
 *
 * One step, the wait: the hold is placed by reserve-stock's step and ended by charge-card's
 * (placeWindowHold, endWindowHold), which Inngest bills as no execution of their own. A run begun
 * before (its memoised reserve-stock has no `windowHold`) goes on with the three steps it began
 * with: `place-fulfilment-hold` (found memoised if it ran), the wait, `end-fulfilment-hold`.
 */
export const waitOutFulfilmentHold = createStep({
  id: fulfilmentHoldStepId,
  invoke: async (ctx: StepContext, reservation?: object): Promise<FulfilmentHoldOutcome> => {
    const window = ctx.deps.settings.fulfilmentHold;
    if (durationMs(window) === 0) return { waited: false };
    const { step, deps, orderId } = ctx;
    // reserve-stock's memoised outcome: `windowHold` in it, or a run begun before the fold.
    const olderRun = reservation !== undefined && !("windowHold" in reservation);
    if (olderRun) {
      await step.run(placeFulfilmentHoldStepId, async () => {
        const hold = await deps.holds.placeHold(orderId, "fulfilment_window", { by: "workflow" });
        return hold ? hold.holdId : null;
      });
    }
    const released = await waitForRelease(ctx, "wait-fulfilment-hold", window);
    if (olderRun) {
      await step.run(fulfilmentHoldStepId, async () => {
        const ended = await deps.holds.releaseHold(orderId, {
          by: "workflow",
          onlyReason: "fulfilment_window",
        });
        return ended ? ended.holdId : null;
      });
    }
    return { waited: true, releasedEarly: released !== null };
  },
  undo: liftHold,
  owesUndo: (outcome) => outcome.waited,
});

export type HoldReleaseOutcome = { held: false } | { held: true; released: boolean };

/**
 * The last look before the label is bought: while the order is on hold (ops, the address check,
 * a dispute), the run waits for the release, re-reading the hold every 6 hours, holding no
 * concurrency slot. After 50 days on hold it stops and tells ops (a re-drive picks it up).
 *
 * An address the carrier rejected while another hold stood (one hold per order) did not get its
 * address hold: once that hold is released the carrier is asked again about the order's address
 * (ops may have corrected it meanwhile) and, still undeliverable, the address hold is placed (ops
 * told, the customer e-mailed the link) and waited for, so the parcel never goes to that address.
 * Runs begun before `held` was in the check's outcome count the address hold placed when a look
 * saw it.
 */
export const awaitHoldRelease = createStep({
  id: awaitHoldReleaseStepId,
  invoke: async (ctx: StepContext, address?: AddressCheckOutcome): Promise<HoldReleaseOutcome> => {
    const { step, deps, orderId, runId } = ctx;
    let addressOwed = address?.deliverable === false && address.held !== true;
    // The first look came with the address check (one statement): no step of its own. A run whose
    // check-address was memoised before that (no `hold` in it) takes it as `check-hold-0`, found
    // memoised if it ran, run now if not.
    const firstLook = address?.hold;
    for (let look = 0; look < maxHoldWaits; look++) {
      const hold =
        look === 0 && firstLook !== undefined
          ? firstLook
          : await step.run(`check-hold-${look}`, async () => lookAt(await deps.holds.current(orderId)));
      if (hold?.reason === "address") addressOwed = false;
      if (!hold && addressOwed) {
        const placed = await step.run(
          holdAddressStepId(look),
          async (): Promise<AddressHoldOutcome | "clear"> => {
            const verdict = await deps.shipments.verifyDestination(orderId);
            if (!verdict || verdict.deliverable) return "clear";
            return holdForAddress(deps, orderId, verdict.message, runId);
          },
        );
        if (placed === "held") addressOwed = false;
        if (placed === "held" || placed === "blocked") {
          await waitForRelease(ctx, `wait-hold-release-${look}`, holdRecheckEvery);
          continue;
        }
      }
      if (!hold) return look === 0 ? { held: false } : { held: true, released: true };
      await waitForRelease(ctx, `wait-hold-release-${look}`, holdRecheckEvery);
    }
    await step.run("alert-held-too-long", () =>
      deps.alerts.notify({
        title: "Order on hold for 50 days",
        runId,
        fields: { orderId, action: "Release the hold (then re-drive the order) or cancel it" },
      }),
    );
    return { held: true, released: false };
  },
  undo: liftHold,
  owesUndo: (outcome) => outcome.held,
});
