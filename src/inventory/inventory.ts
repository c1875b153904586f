/** What the rest of the service may ask of inventory. */
export interface ReservationLine {
  sku: string;
  quantity: number;
}

export type ReserveOutcome =
  | { ok: true; reserved: ReservationLine[] }
  | { ok: false; reason: "out_of_stock"; sku: string; requested: number; available: number };

export interface ProductView {
  sku: string;
  name: string;
  unitPrice: number;
  currency: string;
  quantityAvailable: number;
  /** Nothing to ship: no address is asked for at checkout (issue 13). */
  digital?: boolean;
}

export interface InventoryRepository {
  listProducts(): Promise<ProductView[]>;
  findProducts(skus: string[]): Promise<ProductView[]>;
  /**
   * Reserves every line for the order, or none. Repeating it for the same order is a no-op that
   * reports the existing reservation, so a retried workflow step never takes stock twice.
   */
  reserve(orderId: string, lines: ReservationLine[]): Promise<ReserveOutcome>;
  /** Puts reserved stock back; repeating it releases nothing more. Returns the lines released now. */
  release(orderId: string): Promise<ReservationLine[]>;
}
