import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import Stripe from "stripe";
import { createStripeClient } from "../../src/payments/stripe-client";
import { listenOnLoopback } from "../support/loopback-server";

/** Stripe's API as stripe-node sees it: a session for `cs_known`, Stripe's 404 for anything else. */
async function startStripeApi() {
  const requests: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => {
      const known = req.url?.startsWith("/v1/checkout/sessions/cs_known");
      res
        .writeHead(known ? 200 : 404, {
          "content-type": "application/json",
          "request-id": `req_${requests.length}`,
        })
        .end(
          JSON.stringify(
            known
              ? { id: "cs_known", object: "checkout.session" }
              : {
                  error: {
                    type: "invalid_request_error",
                    code: "resource_missing",
                    message: "No such checkout.session: 'cs_missing'",
                  },
                },
          ),
        );
    });
  });
  return { ...(await listenOnLoopback(server)), requests };
}

describe("the Stripe client (a cheaper webhook lookup)", () => {
  let api: Awaited<ReturnType<typeof startStripeApi>>;
  beforeAll(async () => {
    api = await startStripeApi();
  });
  afterAll(() => api.close());

  it("sends no telemetry, and still names its API version", async () => {
    const stripe = createStripeClient({ secretKey: "sk_test_client", apiBase: api.url });
    await stripe.checkout.sessions.retrieve("cs_known");
    await stripe.checkout.sessions.retrieve("cs_known", { expand: ["payment_intent"] });
    const [first, second] = api.requests.slice(-2);
    for (const request of [first, second]) {
      expect(request?.headers["x-stripe-client-telemetry"]).toBeUndefined();
      const userAgent = JSON.parse(String(request?.headers["x-stripe-client-user-agent"])) as object;
      expect(userAgent).not.toHaveProperty("platform");
      expect(userAgent).not.toHaveProperty("telemetry_id");
      expect(request?.headers["stripe-version"]).toBe(Stripe.API_VERSION);
    }
    expect(second?.url).toBe("/v1/checkout/sessions/cs_known?expand[0]=payment_intent");

    // The check above would see it: stripe-node's default reports the previous request.
    const port = Number(new URL(api.url).port);
    const withTelemetry = new Stripe("sk_test_client", { host: "127.0.0.1", port, protocol: "http" });
    await withTelemetry.checkout.sessions.retrieve("cs_known");
    await withTelemetry.checkout.sessions.retrieve("cs_known");
    expect(api.requests.at(-1)?.headers["x-stripe-client-telemetry"]).toContain("last_request_metrics");
  });
});
