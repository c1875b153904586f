import { createServer } from "node:http";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import type { InventoryRepository } from "../../src/inventory/inventory";
import { createLogger } from "../../src/logger";
import { checkoutRoutes } from "../../src/orders/checkout/checkout-routes";
import type { CheckoutRequest } from "../../src/orders/checkout/checkout-request";
import type { CheckoutService } from "../../src/orders/checkout/checkout-service";
import { listenOnLoopback } from "../support/loopback-server";

const token = "a-long-checkout-token-value";

describe("who may call POST /api/checkout", () => {
  const started: CheckoutRequest[] = [];
  const checkout: CheckoutService = {
    async checkout(request) {
      started.push(request);
      return {
        orderId: "o-1",
        checkoutSessionId: "cs_test_1",
        checkoutUrl: "https://checkout.stripe.test/1",
      };
    },
    expireHalfMade: async () => "not-half-made",
  };
  const inventory = { listProducts: async () => [] } as unknown as InventoryRepository;
  let server: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    const app = buildApp({
      logger: createLogger({ level: "silent" }),
      readiness: { check: async () => ({ ok: true }) } as never,
      checkout: checkoutRoutes({ inventory, checkout, checkoutToken: token }),
    });
    server = await listenOnLoopback(createServer(app));
  });
  afterAll(() => server.close());

  const post = (headers: Record<string, string>) =>
    fetch(`${server.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({
        customerId: "cus-1",
        email: "a@example.com",
        items: [{ sku: "MUG", quantity: 1 }],
      }),
    });

  it("refuses a caller without the shop's token, or with another, and starts nothing", async () => {
    for (const headers of [{}, { authorization: "Bearer not-the-checkout-token" }] as Record<
      string,
      string
    >[]) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
    expect(started).toHaveLength(0);
  });

  it("lets the shop's backend in with its token", async () => {
    const res = await post({ authorization: `Bearer ${token}` });
    expect(res.status).toBe(201);
    expect(started).toEqual([
      { customerId: "cus-1", email: "a@example.com", items: [{ sku: "MUG", quantity: 1 }] },
    ]);
  });

  it("leaves the catalog public", async () => {
    expect((await fetch(`${server.url}/api/products`)).status).toBe(200);
  });

  it("will not start in production without the token", () => {
    expect(() => parseConfig({ NODE_ENV: "production" })).toThrow(
      /CHECKOUT_API_TOKEN: required when NODE_ENV=production/,
    );
  });
});
