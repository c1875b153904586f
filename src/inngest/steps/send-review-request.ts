import { createStep } from "./saga";

export const sendReviewRequestStepId = "send-review-request";

/** Asks for a review, once (key `review-<orderId>`), and completes the order. */
export const sendReviewRequest = createStep({
  id: sendReviewRequestStepId,
  invoke: ({ step, deps, orderId, runId }, afterDelivery: boolean) =>
    step.run(sendReviewRequestStepId, async () => {
      const sent = await deps.messages.reviewRequest(orderId);
      await deps.orders.transition(orderId, ["shipped", "delivered"], "completed", {
        kind: "review-requested",
        detail: { ...sent, afterDelivery },
        runId,
      });
      return sent;
    }),
});
