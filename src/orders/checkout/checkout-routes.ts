import { Router } from "express";
import { AppError } from "../../errors";
import type { InventoryRepository } from "../../inventory/inventory";
import { parseCheckoutRequest } from "./checkout-request";
import type { CheckoutService } from "./checkout-service";

/** Printable ASCII, as Stripe's own Idempotency-Key: long enough for a UUID or a hash. */
const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!idempotencyKeyPattern.test(header)) {
    throw new AppError("validation_failed", "Idempotency-Key must be 1 to 255 printable ASCII characters");
  }
  return header;
}

/** GET /api/products and POST /api/checkout; mounted after the JSON body parser. */
export function checkoutRoutes(deps: { inventory: InventoryRepository; checkout: CheckoutService }): Router {
  const router = Router();
  router.get("/api/products", async (_req, res) => {
    res.json({ products: await deps.inventory.listProducts() });
  });
  router.post("/api/checkout", async (req, res) => {
    const idempotencyKey = idempotencyKeyOf(req.get("idempotency-key"));
    // A 503 (Stripe or the database unavailable) carries Retry-After (src/http/errors.ts): the
    // client retries with the same key.
    const result = await deps.checkout.checkout(parseCheckoutRequest(req.body), {
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    });
    res.status(201).json(result);
  });
  return router;
}
