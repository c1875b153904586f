import type { StepContext } from "./context";

export const sendReviewRequestStepId = "send-review-request";

/** Asks for a review, once (key `review-<orderId>`), and completes the order. */
export function sendReviewRequest({ step, deps, orderId, runId }: StepContext, afterDelivery: boolean) {
  return step.run(sendReviewRequestStepId, async () => {
    const sent = await deps.messages.reviewRequest(orderId);
    await deps.orders.transition(orderId, ["shipped", "delivered"], "completed");
    await deps.timeline.record(orderId, "review-requested", { ...sent, afterDelivery }, runId);
    return sent;
  });
}
