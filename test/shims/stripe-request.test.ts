import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import os from "node:os";
import Stripe from "stripe";
import { createStripeClient } from "../../src/payments/stripe-client";
import { clientUserAgentOnce, withoutCallerStack } from "../../src/shims/stripe-request";
import { listenOnLoopback } from "../support/loopback-server";

/** Stripe's API as stripe-node sees it: a session for `cs_known`, Stripe's 404 for anything else. */
async function startStripeApi() {
  const requests: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ url: req.url ?? "", headers: req.headers });
    req.resume();
    req.on("end", () => {
      const known = req.url?.startsWith("/v1/checkout/sessions/cs_known");
      res.writeHead(known ? 200 : 404, { "content-type": "application/json" }).end(
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

const userAgentHeader = "x-stripe-client-user-agent";

describe("stripe-node's per-request work on the webhook's lookup (src/shims/stripe-request.ts)", () => {
  let api: Awaited<ReturnType<typeof startStripeApi>>;
  let port: number;
  beforeAll(async () => {
    api = await startStripeApi();
    port = Number(new URL(api.url).port);
  });
  afterAll(() => api.close());

  it("sends the client user agent stripe-node builds, built once for all requests", async () => {
    const shimmed = createStripeClient({ secretKey: "sk_test_shim", apiBase: api.url });
    // The library's own client with the same options: what every request's header must read.
    const own = new Stripe("sk_test_shim", {
      telemetry: false,
      appInfo: { name: "order-fulfillment" },
      host: "127.0.0.1",
      port,
      protocol: "http",
    });
    await own.checkout.sessions.retrieve("cs_known");
    const expected = api.requests.at(-1)?.headers[userAgentHeader];
    expect(JSON.parse(String(expected))).toMatchObject({ application: { name: "order-fulfillment" } });

    await shimmed.checkout.sessions.retrieve("cs_known");
    const release = jest.spyOn(os, "release");
    try {
      for (let i = 0; i < 3; i += 1) await shimmed.checkout.sessions.retrieve("cs_known");
      // stripe-node asks the OS for its release on every request, telemetry off or not (and then
      // drops it): the shimmed client no more after its first request, the library's own again.
      expect(release).not.toHaveBeenCalled();
      await own.checkout.sessions.retrieve("cs_known");
      expect(release).toHaveBeenCalledTimes(1);
    } finally {
      release.mockRestore();
    }
    const sent = api.requests.slice(-5).map((request) => request.headers[userAgentHeader]);
    expect(sent).toEqual([expected, expected, expected, expected, expected]);
  });

  it("leaves a client with telemetry on to stripe-node (its header carries what it learns later)", () => {
    const withTelemetry = new Stripe("sk_test_shim", { host: "127.0.0.1", port, protocol: "http" });
    const own = (withTelemetry as unknown as { getClientUserAgent: unknown }).getClientUserAgent;
    expect(clientUserAgentOnce(withTelemetry)).toBe(false);
    expect((withTelemetry as unknown as { getClientUserAgent: unknown }).getClientUserAgent).toBe(own);
  });

  it("takes no caller stack for a lookup, and a failed one keeps its type, status and message", async () => {
    const stripe = createStripeClient({ secretKey: "sk_test_shim", apiBase: api.url });
    const before = Error.stackTraceLimit;

    const lookup = withoutCallerStack(() => stripe.checkout.sessions.retrieve("cs_missing"));
    expect(Error.stackTraceLimit).toBe(before);
    const error = (await lookup.catch((failure: unknown) => failure)) as Stripe.errors.StripeError;
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error.statusCode).toBe(404);
    expect(error.message).toBe("No such checkout.session: 'cs_missing'");
    const callerFrames = (stack: string | undefined) =>
      (stack?.split("Originating from:")[1] ?? "")
        .split("\n")
        .filter((line) => line.trim().startsWith("at "));
    // The error's own frames stay; stripe-node's marker stays too, over no caller frames.
    expect(error.stack?.split("Originating from:")[0]).toContain("    at ");
    expect(callerFrames(error.stack)).toEqual([]);

    // Without it, stripe-node appends the caller's frames (this test's among them).
    const withStack = (await stripe.checkout.sessions
      .retrieve("cs_missing")
      .catch((failure: unknown) => failure)) as Stripe.errors.StripeError;
    expect(withStack).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(callerFrames(withStack.stack).join("\n")).toContain("stripe-request.test.ts");
  });

  it("restores the stack limit when the call throws", () => {
    const before = Error.stackTraceLimit;
    expect(() =>
      withoutCallerStack(() => {
        throw new Error("synchronous failure");
      }),
    ).toThrow("synchronous failure");
    expect(Error.stackTraceLimit).toBe(before);
  });
});
