import type { Inngest } from "inngest";
import { functionCancelled } from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";
import { inngestAppId } from "../client";
import { compensate } from "../steps/compensate";
import { handBackLabels } from "../steps/hand-back-labels";
import { fulfillOrderFunctionId, fulfilmentUndos } from "./fulfill-order";

/** A parcel's label as `label-kept-for-redrive` records it. */
interface KeptParcel {
  parcelNumber: number;
  carrier: string;
  trackingNumber: string;
}

const cancelledRunFunctionId = `${inngestAppId}-${fulfillOrderFunctionId}`;

/**
 * A cancelled run emits inngest/function.cancelled and never inngest/function.failed, so this
 * is the only place that undoes what a cancelled fulfilment did. Inngest does not wait for the
 * step that was in flight, so the cleanup first fences the order (`cancel_requested_at`, under
 * the order's row lock): from then on no step of the cancelled run can record anything, and a
 * step that finishes late undoes its own side effect. Then it runs the same compensate() as the
 * fulfilment, over every undo a fulfilment can owe: stock back, money back as Stripe's
 * PaymentIntent says (void or refund), order ended, one e-mail. Once the parcel is booked, its
 * label is handed back to the carrier first (EasyPost refunds a label not scanned yet): only then
 * is the rest undone. A scanned parcel, or a label the carrier will not take back, goes to ops.
 */
export function createCleanupCancelledOrder(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: "cleanup-cancelled-order",
      name: "Clean up after a cancelled fulfilment",
      triggers: [
        { event: functionCancelled.name, if: `event.data.function_id == '${cancelledRunFunctionId}'` },
      ],
      retries: 5,
    },
    async ({ event, step, runId }) => {
      const data = functionCancelled.schema.parse(event.data);
      const cancelledRunId = data.run_id;

      const target = await step.run("find-order", async () => {
        const orderId = data.event?.data?.orderId ?? (await deps.timeline.orderOfRun(cancelledRunId));
        if (!orderId) return null;
        const order = await deps.orders.findForFulfilment(orderId);
        if (!order) return null;
        // A run that lost the claim never touched the order; cleaning up after it would undo the winner's work.
        const owner = await deps.timeline.claimingRunOf(orderId);
        const ownedByCancelledRun = owner === null || owner === cancelledRunId;
        return { orderId, ownedByCancelledRun };
      });
      if (!target) return { skipped: "order-not-found", cancelledRunId };
      if (!target.ownedByCancelledRun) return { skipped: "run-did-not-own-order", orderId: target.orderId };

      const { orderId } = target;
      const fence = await step.run("fence-order", () => deps.fulfilment.fenceForCancel(orderId));
      if (fence === "not-found") return { skipped: "order-not-found", cancelledRunId };
      if (fence === "shipped") {
        const voided = await step.run("void-label", () => deps.labels.voidLabel(orderId, "cancelled", runId));
        if (voided.outcome !== "requested") {
          await step.run("alert-shipped-order-cancelled", async () => {
            await deps.timeline.record(orderId, "cancel-needs-ops", { cancelledRunId, ...voided }, runId);
          });
          return { orderId, outcome: "needs-ops" as const };
        }
      }

      if (fence === "fenced") {
        // Labels a superseded run kept for its re-drive's run, which never recorded them: handed
        // back now (decision 0170), ops told where the carrier will not take one back.
        await step.run("hand-back-kept-labels", async () => {
          const entries = (await deps.timeline.list(orderId)).filter(
            (entry) => entry.kind === "label-kept-for-redrive",
          );
          const recorded = new Set((await deps.shipments.findByOrder(orderId)).map((p) => p.trackingNumber));
          const unrecorded = entries
            .flatMap((entry) => (entry.detail as { parcels?: KeptParcel[] }).parcels ?? [])
            .filter((parcel) => !recorded.has(parcel.trackingNumber))
            .map((parcel) => ({ ...parcel, trackingUrl: "" }));
          return handBackLabels(deps, {
            orderId,
            runId,
            parcels: unrecorded,
            entryKey: (parcel) => `${runId}/kept-${parcel.parcelNumber}`,
            detail: { cause: "cancelled" },
            flagReason: "a label bought before a re-drive could not be handed back",
          });
        });
      }

      // How far the cancelled run got is not known here: every undo of the fulfilment runs, and
      // each changes nothing where there is nothing to undo.
      const ctx = { step, deps, orderId, runId };
      const { outcome, settlement } = await compensate(
        ctx,
        fulfilmentUndos,
        () => ({ status: "cancelled", reason: "cancelled by request" }),
        { labelVoided: fence === "shipped" },
      );
      return { orderId, outcome: outcome?.status ?? "not-ended", settlement };
    },
  );
}
