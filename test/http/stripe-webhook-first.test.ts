import { Router } from "express";
import Stripe from "stripe";
import request from "supertest";
import { buildApp } from "../../src/app";
import { AppError } from "../../src/errors";
import type { ReadinessProbe } from "../../src/health/readiness";
import { captureLog } from "../support/log-capture";
import type { StripeIntake } from "../../src/orders/intake/stripe-intake";
import {
  stripeWebhookEndpoint,
  stripeWebhookPath,
  type StripeWebhookEndpoint,
} from "../../src/orders/intake/stripe-webhook-route";

/**
 * buildApp answers POST /api/stripe/webhook, exactly that URL, before express sets the request up; every
 * other URL goes through express, which serves the same endpoint as a route. Both must answer alike, failures
 * included.
 */
const readiness: ReadinessProbe = async () => ({ ready: true, checks: {} });
const webhookSecret = "whsec_first_0123456789";

/** An endpoint that says which way it was reached, or fails with `failure`. */
function probeEndpoint(failure?: unknown): StripeWebhookEndpoint {
  return {
    serve: (req, res, fail) => {
      if (failure !== undefined) {
        req.log = captureLog("silent").logger;
        fail(failure);
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ servedBy: "first" }));
    },
    router: Router().post(stripeWebhookPath, (_req, res) => void res.json({ servedBy: "express" })),
    warmUp: () => Promise.resolve(0),
  };
}

describe("the Stripe webhook served before express", () => {
  it("takes the exact URL first, with the app's common headers; other URLs and methods go to express", async () => {
    const app = buildApp({ logger: captureLog("silent").logger, readiness, stripeWebhook: probeEndpoint() });

    const first = await request(app).post(stripeWebhookPath).send("{}").expect(200);
    expect(first.body).toEqual({ servedBy: "first" });
    expect(first.headers["x-content-type-options"]).toBe("nosniff");

    for (const url of [`${stripeWebhookPath}?source=stripe`, `${stripeWebhookPath}/`]) {
      const viaExpress = await request(app).post(url).send("{}").expect(200);
      expect(viaExpress.body).toEqual({ servedBy: "express" });
      expect(viaExpress.headers["x-content-type-options"]).toBe("nosniff");
    }
    await request(app).get(stripeWebhookPath).expect(404);
    await request(app).get("/healthz").expect(200);
  });

  it.each([
    [
      "a client error",
      new AppError("invalid_signature", "bad"),
      400,
      { code: "invalid_signature", message: "bad" },
    ],
    [
      "a body too large (body-parser's error)",
      Object.assign(new Error("request entity too large"), { type: "entity.too.large", status: 413 }),
      413,
      { code: "payload_too_large", message: "Request body is too large" },
    ],
    [
      "our own failure",
      new Error("database down"),
      500,
      { code: "internal_error", message: "Something went wrong on our side; it has been logged." },
    ],
  ])("answers %s through the app's error handler", async (_what, failure, status, error) => {
    const app = buildApp({
      logger: captureLog("silent").logger,
      readiness,
      stripeWebhook: probeEndpoint(failure),
    });
    const res = await request(app).post(stripeWebhookPath).send("{}").expect(status);
    expect(res.body).toEqual({ error });
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
  });

  describe("the real endpoint answers alike either way", () => {
    const intake: StripeIntake = {
      handle: async (event) =>
        event.type === "checkout.session.completed"
          ? { outcome: "processed", orderId: "order-1", announced: true }
          : Promise.reject(new Error("intake failed")),
    };
    const log = captureLog("info");
    const app = buildApp({
      logger: log.logger,
      readiness,
      stripeWebhook: stripeWebhookEndpoint({ intake, webhookSecret, logger: log.logger }),
    });
    const payload = (type: string) =>
      JSON.stringify({ id: "evt_1", object: "event", type, data: { object: { id: "cs_1" } } });
    const signed = (body: string) =>
      Stripe.webhooks.generateTestHeaderString({ payload: body, secret: webhookSecret });

    it.each([
      ["a verified delivery", payload("checkout.session.completed"), signed, 200],
      ["a wrong signature", payload("checkout.session.completed"), () => "t=1,v1=00", 400],
      ["a missing signature", payload("checkout.session.completed"), undefined, 400],
      ["a failing intake", payload("payment_intent.succeeded"), signed, 500],
      ["a body over 1 MB", JSON.stringify({ pad: "x".repeat(1_100_000) }), signed, 413],
    ])("%s", async (_what, body, sign, status) => {
      const answers = [];
      for (const url of [stripeWebhookPath, `${stripeWebhookPath}?via=express`]) {
        const req = request(app).post(url).set("Content-Type", "application/json");
        const res = await (sign ? req.set("Stripe-Signature", sign(body)) : req).send(body);
        const { date: _date, ...headers } = res.headers;
        answers.push({ status: res.status, headers, body: res.body as unknown });
      }
      expect(answers[0]?.status).toBe(status);
      expect(answers[0]).toEqual(answers[1]);
    });
  });
});
