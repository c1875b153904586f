import type { Database } from "./client";

/** A small catalog so that a fresh `npm start` can take orders at once. */
export const demoCatalog = [
  {
    sku: "TSHIRT-BLK-M",
    name: "Black T-shirt (M)",
    unitPrice: 2500,
    currency: "usd",
    stockOnHand: 100,
    weightOz: 6,
  },
  { sku: "MUG-LOGO", name: "Logo mug", unitPrice: 1200, currency: "usd", stockOnHand: 50, weightOz: 14 },
  { sku: "STICKER-PACK", name: "Sticker pack", unitPrice: 500, currency: "usd", stockOnHand: 500 },
  { sku: "HOODIE-GRY-L", name: "Grey hoodie (L)", unitPrice: 5500, currency: "usd", stockOnHand: 20 },
  { sku: "POSTER-A2", name: "A2 poster", unitPrice: 1800, currency: "usd", stockOnHand: 3 },
] as const;

/** Inserts the demo catalog only into an empty catalog; returns how many products it added. */
export async function seedDemoCatalogIfEmpty(db: Database): Promise<number> {
  const existing = await db.product.count();
  if (existing > 0) return 0;
  // The opening stock is each product's first ledger row (stock_on_hand = the sum of movements).
  const [result] = await db.$transaction([
    db.product.createMany({ data: [...demoCatalog], skipDuplicates: true }),
    db.stockMovement.createMany({
      data: demoCatalog.map((product) => ({
        sku: product.sku,
        delta: product.stockOnHand,
        reason: "received" as const,
        actor: "seed",
        note: "demo catalog",
        stockAfter: product.stockOnHand,
      })),
    }),
  ]);
  return result.count;
}
