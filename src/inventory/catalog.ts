import type { Database } from "../db/client";
import { AppError } from "../errors";
import type { Product as ProductRow } from "../generated/prisma/client";
import type { LowStockWatch } from "./low-stock";
import type {
  CreateProductBody,
  Product,
  StockChangeBody,
  StockMovement,
  UpdateProductBody,
} from "./product-schemas";
import type { StockLedger } from "./stock-ledger";

/** Who changed the catalog: the door a person used, or the CSV import. */
export type CatalogActor = "admin-api" | "ops-console" | "csv-import";

export function toProduct(row: ProductRow): Product {
  return {
    sku: row.sku,
    name: row.name,
    unitPrice: row.unitPrice,
    currency: row.currency.trim(),
    digital: row.digital,
    shipsAlone: row.shipsAlone,
    weightOz: row.weightOz,
    lengthIn: row.lengthIn,
    widthIn: row.widthIn,
    heightIn: row.heightIn,
    lowStockThreshold: row.lowStockThreshold,
    taxCode: row.taxCode,
    stockOnHand: row.stockOnHand,
    lowStock: row.lowStockThreshold !== null && row.stockOnHand <= row.lowStockThreshold,
    archived: row.archivedAt !== null,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The catalog's use cases, shared by the admin API (/api/admin/products) and the ops console
 * (/ops/products). A price change touches the product only: an order copies name and price into
 * its lines when it is placed, so nothing already ordered changes.
 */
export interface Catalog {
  list(filter?: { includeArchived?: boolean; lowOnly?: boolean }): Promise<Product[]>;
  get(sku: string): Promise<Product | null>;
  create(input: CreateProductBody, by: CatalogActor): Promise<Product>;
  /** With `expectedVersion`, refused (409 version_conflict) when someone else edited it since. */
  update(
    sku: string,
    patch: UpdateProductBody,
    options: { expectedVersion?: number; by: CatalogActor },
  ): Promise<Product>;
  changeStock(sku: string, change: StockChangeBody, by: CatalogActor): Promise<StockMovement>;
  ledger: Pick<StockLedger, "page" | "mismatches">;
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown }).code === "P2002";

/**
 * A product already on an order keeps its currency: refunds, returns and exchanges price its lines
 * against the order's currency, and an exchange to it from an older order would mix two. Sell it
 * in another currency under a new SKU.
 */
async function refuseSoldCurrencyChange(db: Database, sku: string, currency: string): Promise<void> {
  const product = await db.product.findUnique({ where: { sku }, select: { currency: true } });
  if (!product || product.currency.trim() === currency.toLowerCase()) return;
  const sold = await db.orderLine.findFirst({ where: { sku }, select: { orderId: true } });
  if (sold) {
    throw new AppError(
      "currency_locked",
      `Product ${sku} has been ordered in ${product.currency.trim()}; its currency cannot change. Create a new SKU to sell it in ${currency.toLowerCase()}`,
    );
  }
}

export function createCatalog(db: Database, deps: { ledger: StockLedger; lowStock: LowStockWatch }): Catalog {
  const { ledger, lowStock } = deps;
  const fetch = async (sku: string) => db.product.findUnique({ where: { sku } });
  // A product edit or stock change may cross a threshold: look at once, not only at the next cron.
  const watch = async () => {
    await lowStock.check();
  };
  return {
    async list(filter = {}) {
      const rows = await db.product.findMany({
        where: filter.includeArchived ? {} : { archivedAt: null },
        orderBy: { sku: "asc" },
      });
      const products = rows.map(toProduct);
      return filter.lowOnly ? products.filter((product) => product.lowStock) : products;
    },

    async get(sku) {
      const row = await fetch(sku);
      return row ? toProduct(row) : null;
    },

    async create(input, by) {
      const { stockOnHand = 0, currency, ...fields } = input;
      try {
        const row = await db.$transaction(async (tx) => {
          // SKUs are one namespace whatever their case (a picker reading "mug" finds MUG): two
          // creates of MUG and mug wait on the same lock, and the second sees the first.
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`product-sku:${input.sku.toLowerCase()}`}))`;
          const same = await tx.product.findFirst({
            where: { sku: { equals: input.sku, mode: "insensitive" } },
            select: { sku: true },
          });
          if (same) {
            throw new AppError(
              "product_exists",
              same.sku === input.sku
                ? `Product ${input.sku} already exists`
                : `Product ${same.sku} already exists: SKUs differing only in case (${input.sku}) are the same SKU`,
            );
          }
          return tx.product.create({
            data: {
              ...fields,
              currency: currency.toLowerCase(),
              stockOnHand,
              // The opening stock is the ledger's first row, written with the product.
              ...(stockOnHand > 0
                ? {
                    movements: {
                      create: {
                        delta: stockOnHand,
                        reason: "received",
                        actor: by,
                        note: "opening stock",
                        stockAfter: stockOnHand,
                      },
                    },
                  }
                : {}),
            },
          });
        });
        await watch();
        return toProduct(row);
      } catch (error) {
        if (isUniqueViolation(error))
          throw new AppError("product_exists", `Product ${input.sku} already exists`);
        throw error;
      }
    },

    async update(sku, patch, { expectedVersion }) {
      const { archived, version, currency, ...fields } = patch;
      const expected = expectedVersion ?? version;
      if (currency !== undefined) await refuseSoldCurrencyChange(db, sku, currency);
      const updated = await db.product.updateMany({
        where: { sku, ...(expected !== undefined ? { version: expected } : {}) },
        data: {
          ...fields,
          ...(currency !== undefined ? { currency: currency.toLowerCase() } : {}),
          ...(archived === true
            ? { archivedAt: new Date() }
            : archived === false
              ? { archivedAt: null }
              : {}),
          version: { increment: 1 },
        },
      });
      const row = await fetch(sku);
      if (!row) throw new AppError("product_not_found", `Product ${sku} does not exist`);
      if (updated.count === 0) {
        throw new AppError(
          "version_conflict",
          `Product ${sku} was changed since version ${expected}: it is at version ${row.version}; read it again and retry`,
          { details: { sku, version: row.version } },
        );
      }
      if (patch.lowStockThreshold !== undefined || archived !== undefined) await watch();
      return toProduct(row);
    },

    async changeStock(sku, change, by) {
      const movement = await ledger.record({ sku, ...change, actor: by });
      await watch();
      return movement;
    },

    ledger,
  };
}
