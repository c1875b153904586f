import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type Stripe from "stripe";
import {
  createStripeSandbox,
  type StripeSandbox,
  type StripeSandboxOptions,
} from "../../../src/dev/stripe-sandbox";
import { createLogger } from "../../../src/logger";
import { createStripeClient } from "../../../src/payments/stripe-client";

export const webhookSecret = "whsec_sandbox_test_secret_0123456789";
export const logger = createLogger({ level: "silent" });

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A bare HTTP endpoint that records what the sandbox POSTs and answers with `status()`. */
export async function startWebhookReceiver(status: () => number = () => 200): Promise<{
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function startSandbox(
  options: Partial<StripeSandboxOptions> = {},
  client: { timeoutMs?: number; maxNetworkRetries?: number } = {},
): Promise<{ sandbox: StripeSandbox; stripe: Stripe; url: string }> {
  const sandbox = createStripeSandbox({ webhookSecret, logger, ...options });
  const { url } = await sandbox.listen(0);
  const stripe = createStripeClient({ secretKey: "sk_test_sandbox", apiBase: url, ...client });
  return { sandbox, stripe, url };
}

export const sessionParams = (
  overrides: Partial<Stripe.Checkout.SessionCreateParams> = {},
): Stripe.Checkout.SessionCreateParams => ({
  mode: "payment",
  line_items: [
    { price_data: { currency: "eur", unit_amount: 1250, product_data: { name: "Mug" } }, quantity: 2 },
    { price_data: { currency: "eur", unit_amount: 990, product_data: { name: "Tea, 100 g" } }, quantity: 1 },
  ],
  client_reference_id: "8d7f6f57-6a53-4a3e-9a65-0f0e0e3f7f10",
  customer_email: "ada@example.com",
  metadata: { orderId: "8d7f6f57-6a53-4a3e-9a65-0f0e0e3f7f10", customerId: "cus-42" },
  payment_intent_data: {
    capture_method: "manual",
    metadata: { orderId: "8d7f6f57-6a53-4a3e-9a65-0f0e0e3f7f10" },
  },
  success_url: "https://shop.example/thanks?session={CHECKOUT_SESSION_ID}",
  cancel_url: "https://shop.example/cart",
  ...overrides,
});
