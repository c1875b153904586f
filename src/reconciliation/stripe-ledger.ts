import type Stripe from "stripe";
import { breakdownExpansions } from "../payments/money-breakdown";
import type { ShopDay } from "./shop-day";

/** What the reconciliation reads from Stripe: the day's ledger, page by page, and open disputes. */
export interface StripeLedger {
  /**
   * A live account (`stripeKeyIsLive`): the report's rows without an order link its live Dashboard
   * pages; unset or false, its test-mode ones.
   */
  readonly livemode?: boolean;
  /**
   * The balance transactions created in the day, newest first, one page (at most 100) at a time
   * with their sources expanded: a day of thousands is never held in memory at once.
   */
  transactionPages(day: ShopDay): AsyncIterable<Stripe.BalanceTransaction[]>;
  /** One refund, to tell "not at Stripe" from "at Stripe on another day". Null: Stripe has none. */
  refund(id: string): Promise<Stripe.Refund | null>;
  /** One dispute, to find ours that Stripe does not have. Null: Stripe has none. */
  dispute(id: string): Promise<Stripe.Dispute | null>;
  /** Disputes created before `until` and within Stripe's dispute window, that are still open. */
  openDisputes(until: Date): AsyncIterable<Stripe.Dispute>;
  /**
   * An order's Checkout Session with its money breakdown expanded (line items with their products,
   * the chosen shipping rate), to compare each component with what the intake recorded. Null:
   * Stripe has none. Unset: the components are not compared.
   */
  checkoutSession?(id: string): Promise<Stripe.Checkout.Session | null>;
}

const pageSize = 100;
/** Card networks allow disputes up to 120 days after the charge; answers take weeks more. */
const disputeLookbackMs = 180 * 86_400_000;
const openStatuses: readonly Stripe.Dispute.Status[] = [
  "warning_needs_response",
  "warning_under_review",
  "needs_response",
  "under_review",
];

const unix = (date: Date) => Math.floor(date.getTime() / 1000);

export function createStripeLedger(stripe: Stripe, options: { livemode?: boolean } = {}): StripeLedger {
  return {
    livemode: options.livemode ?? false,
    async *transactionPages(day) {
      let startingAfter: string | undefined;
      for (;;) {
        const page = await stripe.balanceTransactions.list({
          created: { gte: unix(day.start), lt: unix(day.end) },
          limit: pageSize,
          expand: ["data.source"],
          ...(startingAfter ? { starting_after: startingAfter } : {}),
        });
        if (page.data.length > 0) yield page.data;
        startingAfter = page.data.at(-1)?.id;
        if (!page.has_more || !startingAfter) return;
      }
    },
    async refund(id) {
      try {
        return await stripe.refunds.retrieve(id);
      } catch (error) {
        if ((error as { code?: string }).code === "resource_missing") return null;
        throw error;
      }
    },
    async dispute(id) {
      try {
        return await stripe.disputes.retrieve(id);
      } catch (error) {
        if ((error as { code?: string }).code === "resource_missing") return null;
        throw error;
      }
    },
    async checkoutSession(id) {
      try {
        return await stripe.checkout.sessions.retrieve(id, { expand: [...breakdownExpansions] });
      } catch (error) {
        if ((error as { code?: string }).code === "resource_missing") return null;
        throw error;
      }
    },
    async *openDisputes(until) {
      const listing = stripe.disputes.list({
        created: { gte: unix(new Date(until.getTime() - disputeLookbackMs)), lt: unix(until) },
        limit: pageSize,
      });
      // stripe-node's auto-pagination fetches one page at a time as the loop asks for more.
      for await (const dispute of listing) {
        if (openStatuses.includes(dispute.status)) yield dispute;
      }
    },
  };
}
