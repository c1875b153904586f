import type { Alerter } from "../alerts";
import type { Logger } from "../logger";
import type { InventoryRepository } from "./inventory";
import type { StockHolds } from "./stock-holds";

/**
 * The inventory the fulfilment workflow sees once stock is held at checkout. It keeps the
 * `InventoryRepository` contract, so the workflow's reserve and release steps are unchanged:
 * - `reserve` converts the order's checkout hold into its reservation; only an order without a
 *   hold (placed before holds existed, or whose hold was lost) takes stock afresh. When that
 *   finds the shelf empty, ops are told it is a stock problem (the run still makes the customer
 *   whole, as before, and does not fail);
 * - `release` gives back the reservation and any hold the order still has (a cancel before the
 *   run converted it).
 */
export function withStockHolds(
  inventory: InventoryRepository,
  deps: { holds: StockHolds; alerts: Alerter; logger: Logger },
): InventoryRepository {
  const logger = deps.logger.child({ component: "stock-holds" });
  return {
    listProducts: () => inventory.listProducts(),
    findProducts: (skus) => inventory.findProducts(skus),

    async reserve(orderId, lines, guard, options) {
      // A conversion after a cancel is harmless: the cleanup's release (after its fence) returns
      // the reservation, and a cleanup that released first leaves no hold to convert.
      const converted = await deps.holds.convert(orderId, options?.record);
      if (converted) return converted;
      const outcome = await inventory.reserve(orderId, lines, guard, options);
      if (!outcome.ok && outcome.reason === "out_of_stock") {
        logger.warn({ orderId, ...outcome }, "out of stock after payment: the order held no stock");
        // Best effort by contract (Alerter never throws), so the step's outcome stands.
        await deps.alerts.notify({
          title: "Stock problem: a paid order found no stock",
          fields: {
            orderId,
            sku: outcome.sku,
            requested: outcome.requested,
            available: outcome.available,
            cause:
              "The order held no stock at payment (its hold was released or lost, or stock was changed by hand)",
            action:
              "Not a failed run: the customer is refunded and told. Check the stock count and why the hold was gone",
          },
        });
      }
      return outcome;
    },

    async release(orderId) {
      const reservation = await inventory.release(orderId);
      const held = await deps.holds.release(orderId);
      return [...reservation, ...held];
    },
  };
}
