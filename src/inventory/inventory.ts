/** What the rest of the service may ask of inventory. */
export interface ReservationLine {
  sku: string;
  quantity: number;
}

/** A line the reservation could not take in full (partial fulfilment): what is missing of it. */
export interface ShortLine {
  sku: string;
  /** Units ordered. */
  requested: number;
  /** Units not reserved (1..requested): not shipped, not charged. */
  short: number;
  /**
   * What the missing units cost, in minor units of the order's currency: with Stripe's recorded
   * breakdown, their share of the line's total (price plus tax share less discount share,
   * src/payments/money-breakdown.ts shortUnitsWorth); without one, unit price × short.
   */
  amount: number;
}

export type ReserveOutcome =
  /**
   * `reserved`: the lines (and quantities) taken. `short`: only with `allowShort`, and only when
   * some line was not taken in full; absent when the order reserved whole.
   */
  | { ok: true; reserved: ReservationLine[]; short?: ShortLine[] }
  | { ok: false; reason: "out_of_stock"; sku: string; requested: number; available: number }
  /** With a guard: the order was cancelled, or re-driven to another run, before anything was taken. */
  | { ok: false; reason: "cancelled" | "superseded" };

export interface ProductView {
  sku: string;
  name: string;
  unitPrice: number;
  currency: string;
  quantityAvailable: number;
  /** Nothing to ship: no address is asked for at checkout. */
  digital?: boolean;
  /** Off sale: no new checkout (orders already placed are not affected). */
  archived?: boolean;
  /** Stripe Tax's product tax code (txcd_…), when the product has its own. */
  taxCode?: string;
}

export interface InventoryRepository {
  listProducts(): Promise<ProductView[]>;
  findProducts(skus: string[]): Promise<ProductView[]>;
  /**
   * Reserves every line for the order, or none. Repeating it for the same order is a no-op that
   * reports the existing reservation, so a retried workflow step never takes stock twice.
   * With `guard`, stock is taken only while that claim owns the order, it is `fulfilling` and no
   * cancellation was requested, checked under the order's row lock in the same transaction (the
   * cancel sets its mark under that lock too, so a reservation never lands after the cleanup's release).
   *
   * With `allowShort` (PARTIAL_FULFILMENT=ship_available) a line short of stock does not stop the
   * others: each line takes what is on hand up to its quantity, and what it could not take is
   * written to its order line (`short_quantity`) by the same statement, so a repeat reports the
   * same `short` lines. Nothing on hand for any line is `out_of_stock`, as without it.
   */
  reserve(
    orderId: string,
    lines: ReservationLine[],
    guard?: { claimId: string },
    options?: {
      allowShort?: boolean;
      /**
       * The run whose `stock-reserved` (and `lines-short`) entries an implementation may write in
       * its own statement, saying so with `entriesRecorded`; without it the caller writes them.
       */
      record?: { runId: string };
    },
  ): Promise<ReserveOutcome & { entriesRecorded?: true }>;
  /** Puts reserved stock back; repeating it releases nothing more. Returns the lines released now. */
  release(orderId: string): Promise<ReservationLine[]>;
}
