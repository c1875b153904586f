import { Router, type RequestHandler } from "express";
import { requireBearerToken } from "../../http/bearer-auth";
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
export function checkoutRoutes(deps: {
  inventory: InventoryRepository;
  checkout: CheckoutService;
  /**
   * The shop backend's token: the request names the customer and their e-mail, which only the
   * shop can vouch for, so with a token no one else may start a checkout in their name.
   */
  checkoutToken?: string;
}): Router {
  const router = Router();
  router.get("/api/products", async (_req, res) => {
    res.json({ products: await deps.inventory.listProducts() });
  });
  const authorised: RequestHandler =
    deps.checkoutToken !== undefined ? requireBearerToken(deps.checkoutToken) : (_req, _res, next) => next();
  router.post("/api/checkout", authorised, async (req, res) => {
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
