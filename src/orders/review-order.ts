import { Prisma, type Database } from "../db/client";
import type { OrderStatus } from "../generated/prisma/enums";
import type { Timeline } from "../timeline/timeline";
import { customerRules } from "../shared/order-model";

/** Orders the customer can review: the parcel is on its way or there. */
export function isReviewable(status: OrderStatus): boolean {
  return (customerRules["review the order"].statuses as readonly string[]).includes(status);
}

export interface ReviewSubmission {
  orderId: string;
  /** 1 to 5 stars. */
  rating: number;
  comment: string;
}

export type ReviewOutcome =
  { accepted: true } | { accepted: false; reason: "not-found" | "already-reviewed" | "not-reviewable" };

/**
 * The customer's review, from the review e-mail's signed link (src/pages/customer): one per order,
 * only once it has shipped, with its rating on the timeline.
 */
export function createReviews(deps: { db: Database; timeline: Pick<Timeline, "record"> }) {
  const { db, timeline } = deps;
  return {
    async submit({ orderId, rating, comment }: ReviewSubmission): Promise<ReviewOutcome> {
      const order = await db.order.findUnique({
        where: { id: orderId },
        select: { status: true, review: { select: { id: true } } },
      });
      if (!order) return { accepted: false, reason: "not-found" };
      if (order.review) return { accepted: false, reason: "already-reviewed" };
      if (!isReviewable(order.status)) return { accepted: false, reason: "not-reviewable" };
      try {
        await db.review.create({ data: { orderId, rating, comment: comment.trim() } });
      } catch (error) {
        // Two submissions racing: the unique order_id lets exactly one in.
        if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002")
          return { accepted: false, reason: "already-reviewed" };
        throw error;
      }
      await timeline.record(orderId, "review-received", { rating });
      return { accepted: true };
    },
  };
}

export type Reviews = ReturnType<typeof createReviews>;
