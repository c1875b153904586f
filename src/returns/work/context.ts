import type { Alerter } from "../../alerts";
import type { Database } from "../../db/client";
import type { EmailSender } from "../../notifications/email-sender";
import type { Refunds } from "../../orders/refund-order";
import type { ExchangeCheckouts } from "../../payments/exchange-checkout";
import type { PaymentGateway } from "../../payments/payment-gateway";
import type { ReturnLabels } from "../../shipping/return-labels";
import type { Timeline } from "../../timeline/timeline";
import type { RestockingFee } from "../return-policy";
import type { ReturnRecords, ReturnRow } from "../return-records";

/** What the return's steps work with (src/wiring.ts builds it). */
export interface ReturnWorkDeps {
  db: Database;
  records: ReturnRecords;
  labels: ReturnLabels;
  refunds: Pick<Refunds, "refund">;
  /** The exchange's off-session charge of the difference, and its refund. */
  payments: Pick<PaymentGateway, "chargeOffSession" | "refundInFull">;
  sender: EmailSender;
  timeline: Pick<Timeline, "record">;
  alerts: Pick<Alerter, "notify">;
  fee: RestockingFee;
  /**
   * Stripe Checkout for a difference the bank refused with authentication_required, and how
   * long the customer has to pay it (EXCHANGE_PAYMENT_WINDOW). Absent: such a refusal is left to
   * ops like a decline.
   */
  checkouts?: { sessions: ExchangeCheckouts; windowMs: number };
  orderUrl(orderId: string): string;
  trackUrl(trackingNumber: string): string;
}

/** One return's work shares these: the ports, and the return read fresh. */
export interface WorkContext {
  deps: ReturnWorkDeps;
  records: ReturnRecords;
  timeline: Pick<Timeline, "record">;
  load(returnId: string): Promise<ReturnRow>;
}

export function createWorkContext(deps: ReturnWorkDeps): WorkContext {
  const { records, timeline } = deps;
  return {
    deps,
    records,
    timeline,
    async load(returnId) {
      const row = await records.get(returnId);
      if (!row) throw new Error(`Return ${returnId} does not exist`);
      return row;
    },
  };
}

/** A return ops ended (or that expired): nothing more is charged or shipped for it. */
export const endedStatuses: readonly string[] = ["rejected", "closed", "cancelled"];

/** The new items an exchange asks for, by name, and the order they belong to. */
export async function exchangeLines(ctx: WorkContext, row: ReturnRow) {
  const { deps } = ctx;
  const order = await deps.db.order.findUniqueOrThrow({
    where: { id: row.order_id },
    include: { lines: { orderBy: { sku: "asc" } } },
  });
  const wanted = row.lines.flatMap((line) => (line.exchangeSku ? [line.exchangeSku] : []));
  const products = await deps.db.product.findMany({
    where: { sku: { in: wanted } },
    select: { sku: true, name: true },
  });
  const names = new Map(products.map((product) => [product.sku, product.name]));
  const lines = row.lines.flatMap((line) =>
    line.exchangeSku
      ? [{ name: names.get(line.exchangeSku) ?? line.exchangeSku, quantity: line.quantity }]
      : [],
  );
  return { order, lines };
}
