import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Stripe from "stripe";
import request from "supertest";
import { createStripeSandbox, type StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { createStripeClient } from "../../../src/payments/stripe-client";
import { logger, sessionParams, startSandbox, startWebhookReceiver, webhookSecret } from "./harness";
import { defined } from "../../support/defined";
import { eventually } from "../../support/eventually";

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

function verified(received: Receiver["received"]): Stripe.Event[] {
  return received.map(({ body, headers }) =>
    Stripe.webhooks.constructEvent(body, headers["stripe-signature"] as string, webhookSecret),
  );
}

describe("Stripe sandbox webhooks, control routes and events", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    ({ sandbox, stripe } = await startSandbox({ webhookUrl: receiver.url }));
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });
  beforeEach(() => receiver.received.splice(0));

  it("completes a session over the control route and delivers events signed like Stripe's", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const res = await request(sandbox.app)
      .post(`/_sandbox/checkout/sessions/${session.id}/complete`)
      .send({ outcome: "authorized" })
      .expect(200);
    expect(res.body.events.map((event: { type: string }) => event.type)).toEqual([
      "payment_intent.created",
      "charge.succeeded",
      "payment_intent.amount_capturable_updated",
      "checkout.session.completed",
    ]);
    expect(res.body.deliveries.every((delivery: { status: number }) => delivery.status === 200)).toBe(true);

    const events = verified(receiver.received);
    const completed = events.find((event) => event.type === "checkout.session.completed");
    expect(completed?.data.object).toMatchObject({
      id: session.id,
      status: "complete",
      payment_status: "unpaid",
      client_reference_id: session.client_reference_id,
      payment_intent: expect.stringMatching(/^pi_/),
    });
    expect(receiver.received[0]?.headers["content-type"]).toBe("application/json; charset=utf-8");

    const redelivery = await request(sandbox.app)
      .post(`/_sandbox/events/${defined(completed).id}/deliver`)
      .expect(200);
    expect(redelivery.body).toMatchObject({ eventId: defined(completed).id, status: 200, attempt: 2 });
    expect(verified(receiver.received).at(-1)?.id).toBe(defined(completed).id);
  });

  it("records without delivering when asked, and walks the async, decline and expiry paths", async () => {
    const asyncSession = await stripe.checkout.sessions.create(
      sessionParams({ payment_intent_data: { capture_method: "automatic" } }),
    );
    const pending = await sandbox.completeCheckoutSession(asyncSession.id, "async_pending", {
      deliver: false,
    });
    expect(receiver.received).toHaveLength(0);
    expect(pending.checkoutSession).toMatchObject({ status: "complete", payment_status: "unpaid" });
    expect(pending.paymentIntent?.status).toBe("processing");
    const settled = await sandbox.settleAsyncPayment(asyncSession.id, true);
    expect(settled.events.at(-1)?.type).toBe("checkout.session.async_payment_succeeded");
    expect(settled.checkoutSession?.payment_status).toBe("paid");

    const declined = await stripe.checkout.sessions.create(sessionParams());
    const attempt = await sandbox.completeCheckoutSession(declined.id, "declined", {
      declineCode: "insufficient_funds",
    });
    expect(attempt.checkoutSession?.status).toBe("open");
    expect(attempt.paymentIntent?.last_payment_error).toMatchObject({
      code: "card_declined",
      decline_code: "insufficient_funds",
    });
    const retried = await sandbox.completeCheckoutSession(declined.id, "authorized");
    expect(retried.paymentIntent?.id).toBe(attempt.paymentIntent?.id);

    const abandoned = await stripe.checkout.sessions.create(sessionParams());
    await request(sandbox.app)
      .post(`/_sandbox/checkout/sessions/${abandoned.id}/expire`)
      .send({})
      .expect(200);
    expect(verified(receiver.received).at(-1)).toMatchObject({
      type: "checkout.session.expired",
      data: { object: { id: abandoned.id, status: "expired" } },
    });

    await request(sandbox.app)
      .post(`/_sandbox/checkout/sessions/${abandoned.id}/complete`)
      .send({ outcome: "authorized" })
      .expect(409);
    await request(sandbox.app)
      .post(`/_sandbox/checkout/sessions/${abandoned.id}/complete`)
      .send({ outcome: "nope" })
      .expect(400);
  });

  it("lists events like GET /v1/events: filters, newest first, cursor pagination", async () => {
    const { sandbox: fresh, stripe: client } = await startSandbox();
    try {
      const startedAt = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 3; i++) {
        const session = await client.checkout.sessions.create(sessionParams());
        await fresh.completeCheckoutSession(session.id, "authorized");
      }
      const page = await client.events.list({
        type: "checkout.session.completed",
        created: { gte: startedAt },
        limit: 2,
      });
      expect(page.data).toHaveLength(2);
      expect(page.has_more).toBe(true);
      expect(defined(page.data[0]).created).toBeGreaterThanOrEqual(defined(page.data[1]).created);

      const all: string[] = [];
      const types = ["checkout.session.completed", "checkout.session.expired"];
      for await (const event of client.events.list({ types, created: { gte: startedAt }, limit: 1 }))
        all.push(event.id);
      expect(all).toHaveLength(3);
      expect(all.slice(0, 2)).toEqual(page.data.map((event) => event.id));
      expect(all.at(-1)).toBe(fresh.events("checkout.session.completed")[0]?.id);

      await expect(client.events.list({ created: { gte: startedAt + 3600 } })).resolves.toMatchObject({
        data: [],
        has_more: false,
      });
      await expect(client.events.list({ starting_after: "evt_missing" })).rejects.toMatchObject({
        code: "resource_missing",
      });
      const wildcard = await client.events.list({ type: "payment_intent.*", limit: 100 });
      expect(wildcard.data.map((event) => event.type)).toEqual(
        Array(6)
          .fill(0)
          .map((_, i) =>
            i % 2 === 0 ? "payment_intent.amount_capturable_updated" : "payment_intent.created",
          ),
      );
    } finally {
      await fresh.close();
    }
  });

  it("serves a checkout page whose buttons complete the session like a customer", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const page = await request(sandbox.app)
      .get(new URL(defined(session.url)).pathname)
      .expect(200);
    expect(page.text).toContain('value="authorized"');
    expect(page.text).not.toContain('value="paid"');
    const paid = await request(sandbox.app)
      .post(new URL(defined(session.url)).pathname)
      .type("form")
      .send({ outcome: "authorized" })
      .expect(303);
    expect(paid.headers.location).toBe(`https://shop.example/thanks?session=${session.id}`);
    expect(sandbox.checkoutSession(session.id)?.status).toBe("complete");
  });

  it("redelivers an event the endpoint failed, like Stripe's retries", async () => {
    let answers = 0;
    const flaky = await startWebhookReceiver(() => (answers++ === 0 ? 500 : 200));
    const { sandbox: retrying, stripe: client } = await startSandbox({
      webhookUrl: flaky.url,
      retryDelaysMs: [10],
      enabledEvents: ["checkout.session.expired"],
    });
    try {
      const session = await client.checkout.sessions.create(sessionParams());
      const { deliveries } = await retrying.expireCheckoutSession(session.id);
      expect(deliveries.map((d) => d.status)).toEqual([500]);
      while (flaky.received.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      await retrying.deliveriesSettled();
      expect(retrying.deliveries.map((d) => [d.type, d.attempt, d.status])).toEqual([
        ["checkout.session.expired", 1, 500],
        ["checkout.session.expired", 2, 200],
      ]);
    } finally {
      await retrying.close();
      await flaky.close();
    }
  });

  it("injects failures through the control route", async () => {
    await request(sandbox.app)
      .post("/_sandbox/failures")
      .send({ endpoint: "checkout.sessions.create", kind: "server_error", times: 1 })
      .expect(201);
    await expect(stripe.checkout.sessions.create(sessionParams())).rejects.toMatchObject({ statusCode: 500 });
    await expect(stripe.checkout.sessions.create(sessionParams())).resolves.toMatchObject({ status: "open" });
    await request(sandbox.app)
      .post("/_sandbox/failures")
      .send({ endpoint: "nope", kind: "server_error" })
      .expect(400);
  });

  it("keeps its state in a JSON file across restarts", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "stripe-sandbox-"));
    const stateFile = path.join(dir, "stripe-sandbox.json");
    try {
      const first = createStripeSandbox({ webhookSecret, logger, stateFile });
      const { url } = await first.listen(0);
      const client = createStripeClient({ secretKey: "sk_test_x", apiBase: url });
      const session = await client.checkout.sessions.create(sessionParams(), {
        idempotencyKey: "persisted-key",
      });
      await first.completeCheckoutSession(session.id, "authorized");
      await first.close();

      const second = createStripeSandbox({ webhookSecret, logger, stateFile });
      const again = createStripeClient({ secretKey: "sk_test_x", apiBase: (await second.listen(0)).url });
      try {
        await expect(again.checkout.sessions.retrieve(session.id)).resolves.toMatchObject({
          status: "complete",
        });
        const replay = await again.checkout.sessions.create(sessionParams(), {
          idempotencyKey: "persisted-key",
        });
        expect(replay.id).toBe(session.id);
        expect(
          (await again.events.list({ type: "checkout.session.completed" })).data[0]?.data.object,
        ).toMatchObject({ id: session.id });
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drops a hung request on close", async () => {
    const { sandbox: hanging, url } = await startSandbox();
    const client = new Stripe("sk_test_x", {
      host: "127.0.0.1",
      port: Number(new URL(url).port),
      protocol: "http",
      timeout: 5000,
      maxNetworkRetries: 0,
    });
    hanging.injectFailure("events.list", { kind: "hang" });
    const call = client.events.list().catch((error: unknown) => error);
    // Closed only once the request is in and held, not after a guess at how long that takes.
    await eventually("the events.list request hangs in the sandbox", () =>
      hanging.requests.some((entry) => entry.endpoint === "events.list" && entry.injected === "hang"),
    );
    await hanging.close();
    expect(await call).toBeInstanceOf(Stripe.errors.StripeConnectionError);
  });
});
