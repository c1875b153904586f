import type { Database } from "../db/client";
import type { InventoryRepository, ProductView, ReservationLine, ReserveOutcome } from "./inventory";

class OutOfStock extends Error {
  constructor(
    readonly sku: string,
    readonly requested: number,
    readonly available: number,
  ) {
    super(`out of stock: ${sku}`);
  }
}

function toView(product: {
  sku: string;
  name: string;
  unitPrice: number;
  currency: string;
  stockOnHand: number;
  digital?: boolean;
}): ProductView {
  return {
    sku: product.sku,
    name: product.name,
    unitPrice: product.unitPrice,
    currency: product.currency,
    quantityAvailable: product.stockOnHand,
    ...(product.digital ? { digital: true } : {}),
  };
}

export function createPrismaInventoryRepository(db: Database): InventoryRepository {
  return {
    async listProducts() {
      const products = await db.product.findMany({ orderBy: { sku: "asc" } });
      return products.map(toView);
    },

    async findProducts(skus) {
      const products = await db.product.findMany({ where: { sku: { in: skus } } });
      return products.map(toView);
    },

    async reserve(orderId, lines): Promise<ReserveOutcome> {
      // Sorted so that two orders reserving the same SKUs lock rows in the same order (no deadlock).
      const sorted = [...lines].sort((a, b) => a.sku.localeCompare(b.sku));
      try {
        return await db.$transaction(async (tx) => {
          // Locking the order serialises concurrent reservations of the same order (a retried step
          // racing its predecessor), so the existence check below cannot be passed twice.
          await tx.$queryRaw`SELECT id FROM orders WHERE id = ${orderId}::uuid FOR UPDATE`;
          const existing = await tx.stockReservation.findMany({ where: { orderId } });
          if (existing.length > 0) {
            return { ok: true, reserved: existing.map(({ sku, quantity }) => ({ sku, quantity })) };
          }
          for (const line of sorted) {
            // The conditional decrement is the guard; the CHECK constraint is the backstop.
            const taken = await tx.product.updateMany({
              where: { sku: line.sku, stockOnHand: { gte: line.quantity } },
              data: { stockOnHand: { decrement: line.quantity } },
            });
            if (taken.count === 0) {
              const product = await tx.product.findUnique({ where: { sku: line.sku } });
              throw new OutOfStock(line.sku, line.quantity, product?.stockOnHand ?? 0);
            }
            await tx.stockReservation.create({ data: { orderId, sku: line.sku, quantity: line.quantity } });
          }
          return { ok: true, reserved: sorted };
        });
      } catch (error) {
        if (error instanceof OutOfStock) {
          return {
            ok: false,
            reason: "out_of_stock",
            sku: error.sku,
            requested: error.requested,
            available: error.available,
          };
        }
        throw error;
      }
    },

    async release(orderId): Promise<ReservationLine[]> {
      return db.$transaction(async (tx) => {
        const held = await tx.stockReservation.findMany({
          where: { orderId, status: "reserved" },
          orderBy: { sku: "asc" },
        });
        const released: ReservationLine[] = [];
        for (const reservation of held) {
          // Conditional on the status, so two concurrent releases return the stock once.
          const flipped = await tx.stockReservation.updateMany({
            where: { orderId, sku: reservation.sku, status: "reserved" },
            data: { status: "released" },
          });
          if (flipped.count === 0) continue;
          await tx.product.update({
            where: { sku: reservation.sku },
            data: { stockOnHand: { increment: reservation.quantity } },
          });
          released.push({ sku: reservation.sku, quantity: reservation.quantity });
        }
        return released;
      });
    },
  };
}
