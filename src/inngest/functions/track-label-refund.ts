import type { Inngest } from "inngest";
import { labelRefundRequested } from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";

export const trackLabelRefundFunctionId = "track-label-refund";

/**
 * EasyPost moves a label refund from `submitted` to `refunded` or `rejected` when the carrier has
 * processed it (USPS: at least 15 days, at most 30) and sends no webhook for it, so this run asks:
 * a durable sleep of LABEL_REFUND_CHECK_EVERY between looks, for as many looks as cover 30 days
 * (at least one). A rejected refund goes to ops (intercept the parcel, or claim by hand); one
 * still submitted after the last look too. A run follows every handed-back label of the order.
 */
export function createTrackLabelRefund(inngest: Inngest, deps: WorkflowDependencies) {
  const { settings } = deps;
  return inngest.createFunction(
    {
      id: trackLabelRefundFunctionId,
      name: "Follow a label refund until the carrier decides",
      triggers: [labelRefundRequested],
      // No idempotency key by order: a re-shipped parcel's label is followed by a run of its own
      // (the event id tells each request apart); every run looks at all of the order's labels.
      retries: 5,
    },
    async ({ event, step, runId }) => {
      const { orderId } = event.data;
      // Marks the order's submitted labels as followed: recover-stalled-orders starts this run for
      // a label left without the mark (its event lost). A new step id: an in-flight run replaying
      // finds it unmemoised and runs it once, its other steps keep their ids.
      await step.run("mark-label-refund-tracked", () => deps.labels.trackingStarted(orderId));
      for (let look = 0; look < settings.labelRefundChecks; look++) {
        await step.sleep(`wait-label-refund-${look}`, settings.labelRefundCheckEvery);
        const status = await step.run(`check-label-refund-${look}`, () =>
          deps.labels.checkRefund(orderId, runId),
        );
        if (status !== "submitted") return { orderId, status };
      }
      await step.run("alert-label-refund-undecided", () =>
        deps.alerts.notify({
          key: `label-refund-undecided-${orderId}-${runId}`,
          title: "Label refund still undecided after 30 days",
          runId,
          fields: { orderId, action: "Ask EasyPost support about the label refund" },
        }),
      );
      return { orderId, status: "submitted" as const };
    },
  );
}
