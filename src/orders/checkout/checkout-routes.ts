import { Router } from "express";
import type { InventoryRepository } from "../../inventory/inventory";
import { parseCheckoutRequest } from "./checkout-request";
import type { CheckoutService } from "./checkout-service";

/** GET /api/products and POST /api/checkout; mounted after the JSON body parser. */
export function checkoutRoutes(deps: { inventory: InventoryRepository; checkout: CheckoutService }): Router {
  const router = Router();
  router.get("/api/products", async (_req, res) => {
    res.json({ products: await deps.inventory.listProducts() });
  });
  router.post("/api/checkout", async (req, res) => {
    res.status(201).json(await deps.checkout.checkout(parseCheckoutRequest(req.body)));
  });
  return router;
}
