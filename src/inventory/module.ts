import type { Alerter } from "../alerts";
import type { Database } from "../db/client";
import type { Logger } from "../logger";
import { createCatalog } from "./catalog";
import { createCatalogCsv } from "./catalog-csv";
import { catalogAdminRoutes } from "./catalog-routes";
import { withStockHolds } from "./holding-inventory";
import { createLowStockWatch } from "./low-stock";
import { createPrismaInventoryRepository } from "./prisma-inventory-repository";
import { createStockHolds } from "./stock-holds";
import { createStockLedger } from "./stock-ledger";

/**
 * The stock and the catalog, composed in their own folder: the inventory, the low-stock watch, the
 * stock ledger, the catalog and its CSV, and /api/admin/products.
 */
export function createInventoryModule(shared: {
  db: Database;
  alerts: Alerter;
  logger: Logger;
  adminToken: string;
  /** The ops console's pages: a product's is linked from its low-stock alert. */
  urls: { product(sku: string): string };
}) {
  const { db, alerts } = shared;
  const inventory = createPrismaInventoryRepository(db);
  const lowStock = createLowStockWatch(db, { alerts, opsProductUrl: (sku) => shared.urls.product(sku) });
  const stockLedger = createStockLedger(db);
  const catalog = createCatalog(db, { ledger: stockLedger, lowStock });
  const csv = createCatalogCsv(db, { lowStock });
  return {
    inventory,
    /** The workflow's inventory: reserve converts the checkout's stock hold (holding-inventory.ts). */
    reserving: withStockHolds(inventory, { holds: createStockHolds(db), alerts, logger: shared.logger }),
    lowStock,
    stockLedger,
    catalog,
    csv,
    admin: catalogAdminRoutes({ adminToken: shared.adminToken, catalog, csv }),
  };
}

export type InventoryModule = ReturnType<typeof createInventoryModule>;
