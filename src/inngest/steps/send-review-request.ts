import { createStep } from "./saga";

export const sendReviewRequestStepId = "send-review-request";

/** Asks for a review, once (key `review-<orderId>`), and completes the order. */
export const sendReviewRequest = createStep({
  id: sendReviewRequestStepId,
  invoke: ({ step, deps, orderId, runId }, afterDelivery: boolean) =>
    step.run(sendReviewRequestStepId, async () => {
      // The order's completion and its `review-requested` entry ride in the e-mail's outcome statement.
      return deps.messages.reviewRequest(orderId, {
        kind: "review-requested",
        runId,
        detail: { afterDelivery },
        from: ["shipped", "delivered"],
        to: "completed",
      });
    }),
});
