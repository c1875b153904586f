import type { GuardRefusal } from "../../orders/fulfilment-records";
import type { ShipmentNotice } from "../../notifications/customer-messages";
import type { CarrierBooking } from "../../shipping/shipping-provider";
import type { WorkflowDependencies } from "../dependencies";
import type { Claim, StepContext } from "./context";
import { handBackLabels } from "./hand-back-labels";
import { createStep } from "./saga";

export const createShipmentStepId = "create-shipment";

export type ShipmentOutcome =
  | {
      shipped: true;
      /**
       * Every parcel, parcel 1 first (none for a digital-only order: nothing to ship, the order is
       * delivered). Missing from the output of runs that booked before orders had several parcels
       * (Inngest replays the memoised output): read `booking` then.
       */
      parcels?: ShipmentNotice[];
      /** Parcel 1, in the output of those older runs only. */
      booking?: ShipmentNotice | null;
    }
  | { shipped: false; stopped: GuardRefusal | "held" };

/** The parcels of an outcome, old (one `booking`) or new (`parcels`). */
export function parcelsOf(outcome: { booking?: ShipmentNotice | null; parcels?: ShipmentNotice[] }) {
  return outcome.parcels ?? (outcome.booking ? [outcome.booking] : []);
}

/**
 * Books every parcel of the order with the carrier, then records the bookings and moves the
 * order to `shipped` under the fulfilment guard: the point of no return, after which a cancel is
 * refused. Bookings that come back after a cancel are voided with the carrier, each parcel's
 * label, or, where the carrier cannot void, ops are alerted to stop the parcel.
 *
 * One step for all parcels, keeping the step id every run had before orders had several (a run
 * in flight across the deploy replays it): each parcel is idempotent by its own key, the order id
 * and parcel number (the carrier reference `order-<id>[-<n>]`, and the shipments row's unique
 * (order, parcel, generation)), so a retried attempt finds what an earlier one bought and buys
 * only what is missing; and the guarded record lands every parcel with the order's move to
 * `shipped`, or none (decision 0100). No undo: from here a failure is for ops (and a re-drive).
 *
 * Decision 0170: the purchase is marked under the order's row lock first (a hold asked while the
 * label is bought waits for its outcome instead of answering "held" for a parcel about to ship),
 * and a record refused for any reason asks the order model whether the labels are still wanted:
 * if not, they are handed back in this same step, or ops told where the carrier will not.
 */
export const createShipment = createStep({
  id: createShipmentStepId,
  invoke: async (
    { step, deps, orderId, runId }: StepContext,
    claim: Claim,
    address?: { shipment?: ShipmentOutcome },
  ) =>
    // check-address booked already, in its own step (decision 0195), when no hold stood in the way.
    address?.shipment ?? step.run(createShipmentStepId, () => bookShipment(deps, orderId, runId, claim)),
});

/**
 * What the customer paid for shipping beside what its labels cost, on the order's timeline (the
 * console shows it), for an order that recorded a chosen option; a label not bought at the chosen
 * service (the carrier did not offer it: the fallback, the cheapest of SHIPPING_SERVICE_LEVELS)
 * is told to ops once (key `label-service-fallback-<orderId>`).
 */
async function recordLabelVsQuote(
  deps: WorkflowDependencies,
  orderId: string,
  runId: string,
  parcels: readonly CarrierBooking[],
): Promise<void> {
  const chosen = parcels.find((parcel) => parcel.chosen)?.chosen;
  if (!chosen) return;
  const labelCost = parcels.every((parcel) => typeof parcel.labelAmount === "number")
    ? parcels.reduce((sum, parcel) => sum + (parcel.labelAmount ?? 0), 0)
    : null;
  const fallback = parcels.some((parcel) => parcel.chosen && !parcel.chosen.matched);
  const detail = {
    chosen: {
      rateId: chosen.rateId ?? null,
      displayName: chosen.displayName ?? null,
      carrier: chosen.carrier ?? null,
      service: chosen.service ?? null,
    },
    bought: parcels.map((parcel) => ({
      carrier: parcel.carrier,
      service: parcel.service ?? null,
      labelAmount: parcel.labelAmount ?? null,
    })),
    fallback,
    customerPaid: chosen.quotedAmount,
    labelCost,
    difference: labelCost === null ? null : chosen.quotedAmount - labelCost,
  };
  await deps.timeline.record(orderId, "shipping-label-vs-quote", detail, runId);
  if (fallback && chosen.service) {
    await deps.alerts.notify({
      key: `label-service-fallback-${orderId}`,
      title: "Label not bought at the shipping service the customer paid for",
      runId,
      fields: {
        orderId,
        paidFor: `${chosen.displayName ?? chosen.rateId ?? "option"} (${[chosen.carrier, chosen.service].filter(Boolean).join(" ")})`,
        bought: detail.bought.map((b) => `${b.carrier} ${b.service ?? ""}`.trim()).join(", "),
        customerPaid: chosen.quotedAmount,
        labelCost: labelCost ?? "unknown",
        action:
          "The carrier did not offer the service: the cheapest of SHIPPING_SERVICE_LEVELS was bought. Tell the customer if it is slower, or refund the difference",
      },
    });
  }
}

/**
 * create-shipment's work, run by its step or, when the address is deliverable and no hold stands,
 * by check-address's (one execution fewer). Idempotent as described above: each parcel by its key,
 * the record by the claim.
 */
export async function bookShipment(
  deps: WorkflowDependencies,
  orderId: string,
  runId: string,
  claim: Pick<Claim, "claimId" | "lines">,
): Promise<ShipmentOutcome> {
  // The mark a hold asked during the purchase waits on; refused, nothing is bought.
  const start = await deps.fulfilment.beginLabelPurchase(orderId, claim.claimId);
  if (start === "held") {
    await deps.alerts.notify({
      title: "Order held just before its label was bought",
      runId,
      fields: {
        orderId,
        action: "Releasing the hold resumes its fulfilment (decision 0201); or cancel it",
      },
    });
    return { shipped: false, stopped: "held" };
  }
  if (start === "cancelled" || start === "superseded") return { shipped: false, stopped: start };
  let parcels;
  try {
    parcels = await deps.shipments.bookWithCarrier({ orderId, lines: claim.lines });
  } catch (error) {
    await deps.fulfilment.endLabelPurchase(orderId, claim.claimId);
    throw error;
  }
  const recorded = await deps.fulfilment.recordShipment({
    orderId,
    claimId: claim.claimId,
    runId,
    parcels,
  });
  // What the workflow keeps (step output, e-mail): the customer's view, not the labels.
  const notices = (parcels ?? []).map((parcel) => ({
    carrier: parcel.carrier,
    trackingNumber: parcel.trackingNumber,
    trackingUrl: parcel.trackingUrl,
    parcelNumber: parcel.parcelNumber,
  }));
  if (recorded.landed) {
    await recordLabelVsQuote(deps, orderId, runId, parcels ?? []);
    return { shipped: true, parcels: notices };
  }
  // Fenced after the fact: whatever the guard's reason, a label the order no longer wants is
  // handed back now (a re-drive's run that still wants it finds it by its carrier reference).
  const unwanted =
    parcels !== null &&
    !(await deps.fulfilment.labelsStillWanted(
      orderId,
      parcels.map((parcel) => parcel.trackingNumber),
    ));
  if (!unwanted && parcels && parcels.length > 0) {
    // Kept for the re-drive's run, which finds it by its carrier reference; if the order is
    // cancelled before that run records it, the cleanup hands it back from this entry.
    await deps.timeline.record(
      orderId,
      "label-kept-for-redrive",
      {
        parcels: parcels.map(({ parcelNumber, carrier, trackingNumber }) => ({
          parcelNumber,
          carrier,
          trackingNumber,
        })),
      },
      runId,
    );
  }
  if (unwanted && parcels) {
    await handBackLabels(deps, {
      orderId,
      runId,
      parcels,
      entryKey: (parcel) => (parcels.length === 1 ? runId : `${runId}/parcel-${parcel.parcelNumber}`),
      flagReason: "a parcel was booked after the order was cancelled",
    });
  }
  return { shipped: false, stopped: recorded.reason };
}
