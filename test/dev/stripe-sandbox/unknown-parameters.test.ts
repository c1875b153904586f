import type Stripe from "stripe";
import type { StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { createStripeCheckoutSessions } from "../../../src/payments/stripe-checkout";
import { createStripePaymentGateway } from "../../../src/payments/stripe-payment-gateway";
import { createStripeEventSource } from "../../../src/recovery/stripe-event-source";
import { defined } from "../../support/defined";
import { sessionParams, startSandbox } from "./harness";

/**
 * Every Stripe call the service makes, sent through stripe-node with the service's own parameters
 * plus one deliberately misspelled, is refused with Stripe's 400 `parameter_unknown`; the service's
 * own parameters pass.
 */
describe("the Stripe sandbox refuses parameters Stripe does not know", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
  });
  afterAll(() => sandbox.close());

  /** `as never`: the typo is the point, so it has to get past stripe-node's parameter types. */
  const typo = <T extends object>(params: T, extra: Record<string, unknown>): T =>
    ({ ...params, ...extra }) as never;

  function unknownParameter(param: string, suggestion?: string) {
    return {
      type: "StripeInvalidRequestError",
      rawType: "invalid_request_error",
      statusCode: 400,
      code: "parameter_unknown",
      param,
      message: `Received unknown parameter: ${param}${suggestion ? `. Did you mean ${suggestion}?` : ""}`,
    };
  }

  async function authorizedPaymentIntent(): Promise<string> {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized", {
      deliver: false,
    });
    return defined(paymentIntent).id;
  }

  it("checkout.sessions.create: a misspelled top-level parameter", async () => {
    await expect(
      stripe.checkout.sessions.create(typo(sessionParams(), { client_refrence_id: "order-1" })),
    ).rejects.toMatchObject(unknownParameter("client_refrence_id", "client_reference_id"));
  });

  it("checkout.sessions.create: a misspelled parameter nested in line_items[] (with its full path)", async () => {
    const params = sessionParams();
    const [first, ...rest] = defined(params.line_items);
    const line = { ...first, price_data: typo(defined(defined(first).price_data), { unit_amont: 100 }) };
    await expect(
      stripe.checkout.sessions.create({ ...params, line_items: [line, ...rest] }),
    ).rejects.toMatchObject(unknownParameter("line_items[0][price_data][unit_amont]", "unit_amount"));
  });

  it("checkout.sessions.create: a misspelled payment_intent_data field", async () => {
    const params = sessionParams();
    const paymentIntentData = typo(defined(params.payment_intent_data), { capture_methd: "manual" });
    await expect(
      stripe.checkout.sessions.create({ ...params, payment_intent_data: paymentIntentData }),
    ).rejects.toMatchObject(unknownParameter("payment_intent_data[capture_methd]", "capture_method"));
  });

  it("payment_intents.retrieve: a misspelled parameter next to expand[]", async () => {
    const id = await authorizedPaymentIntent();
    await expect(
      stripe.paymentIntents.retrieve(id, typo({ expand: ["latest_charge"] }, { expnd: ["customer"] })),
    ).rejects.toMatchObject(unknownParameter("expnd", "expand"));
  });

  it("payment_intents.capture: `amount_to_captur` is refused and nothing is captured", async () => {
    const id = await authorizedPaymentIntent();
    await expect(
      stripe.paymentIntents.capture(id, typo({}, { amount_to_captur: 100 }), {
        idempotencyKey: `capture-typo-${id}`,
      }),
    ).rejects.toMatchObject(unknownParameter("amount_to_captur", "amount_to_capture"));
    expect(sandbox.paymentIntent(id)?.status).toBe("requires_capture");
    // Validation failed before anything ran, so the key saved nothing: the corrected call works.
    const captured = await stripe.paymentIntents.capture(
      id,
      { amount_to_capture: 100 },
      { idempotencyKey: `capture-typo-${id}` },
    );
    expect(captured).toMatchObject({ status: "succeeded", amount_received: 100 });
  });

  it("payment_intents.cancel: a misspelled cancellation_reason", async () => {
    const id = await authorizedPaymentIntent();
    await expect(
      stripe.paymentIntents.cancel(id, typo({}, { cancelation_reason: "abandoned" })),
    ).rejects.toMatchObject(unknownParameter("cancelation_reason", "cancellation_reason"));
    expect(sandbox.paymentIntent(id)?.status).toBe("requires_capture");
  });

  it("refunds.create: a misspelled payment_intent", async () => {
    await expect(stripe.refunds.create(typo({}, { payment_intnt: "pi_123" }))).rejects.toMatchObject(
      unknownParameter("payment_intnt", "payment_intent"),
    );
  });

  it("events.list: a misspelled parameter, and one nested in created[]", async () => {
    await expect(
      stripe.events.list(typo({ types: ["checkout.session.completed"] }, { limt: 10 })),
    ).rejects.toMatchObject(unknownParameter("limt", "limit"));
    await expect(stripe.events.list({ created: typo({ gte: 1 }, { lt_e: 2 }) })).rejects.toMatchObject(
      unknownParameter("created[lt_e]", "lte"),
    );
  });

  it("the other endpoints the sandbox serves: retrieve/expire/line_items of a session, a refund, an event", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const bad = typo({}, { expandd: ["payment_intent"] });
    await expect(stripe.checkout.sessions.retrieve(session.id, bad)).rejects.toMatchObject(
      unknownParameter("expandd", "expand"),
    );
    await expect(
      stripe.checkout.sessions.listLineItems(session.id, typo({}, { limitt: 5 })),
    ).rejects.toMatchObject(unknownParameter("limitt", "limit"));
    await expect(stripe.checkout.sessions.expire(session.id, bad)).rejects.toMatchObject(
      unknownParameter("expandd", "expand"),
    );
    expect(sandbox.checkoutSession(session.id)?.status).toBe("open");
    await expect(stripe.refunds.retrieve("re_123", bad)).rejects.toMatchObject(
      unknownParameter("expandd", "expand"),
    );
    await expect(stripe.events.retrieve("evt_123", bad)).rejects.toMatchObject(
      unknownParameter("expandd", "expand"),
    );
  });

  it("a wholly unknown parameter gets no suggestion; a hash where a scalar belongs is invalid", async () => {
    const id = await authorizedPaymentIntent();
    await expect(stripe.paymentIntents.capture(id, typo({}, { shiny: "yes" }))).rejects.toMatchObject(
      unknownParameter("shiny"),
    );
    await expect(
      stripe.paymentIntents.capture(id, typo({}, { amount_to_capture: { value: 5 } })),
    ).rejects.toMatchObject({
      statusCode: 400,
      code: "parameter_invalid_string",
      param: "amount_to_capture",
    });
  });

  it("expand[]: renders what it can, refuses what it does not render instead of ignoring it", async () => {
    const id = await authorizedPaymentIntent();
    const expanded = await stripe.paymentIntents.retrieve(id, { expand: ["latest_charge"] });
    expect(expanded.latest_charge).toMatchObject({ object: "charge", payment_intent: id });
    await expect(stripe.paymentIntents.retrieve(id, { expand: ["customer"] })).rejects.toMatchObject({
      statusCode: 400,
      code: "parameter_invalid_string",
      param: "expand",
      message: expect.stringContaining("This property cannot be expanded (customer)"),
    });
    await expect(stripe.refunds.retrieve("re_123", { expand: ["charge"] })).rejects.toMatchObject({
      statusCode: 400,
      param: "expand",
    });
    const session = await stripe.checkout.sessions.create(sessionParams());
    const expired = await stripe.checkout.sessions.expire(session.id, { expand: ["line_items"] });
    expect(expired.line_items?.data).toHaveLength(2);
  });

  it("accepts every parameter the service itself sends, through the service's own adapters", async () => {
    const checkout = createStripeCheckoutSessions(stripe, { captureMethod: "manual" });
    const created = await checkout.create({
      orderId: "6c1f0d7e-3b0e-4f55-9a8e-2f1f8f0c7a11",
      customerId: "cus-7",
      email: "ada@example.com",
      currency: "eur",
      lines: [{ sku: "MUG", name: "Mug", unitPrice: 1250, quantity: 2 }],
      successUrl: "https://shop.example/thanks",
      cancelUrl: "https://shop.example/cart",
      expiresAt: new Date(Date.now() + 60 * 60 * 1000),
    });
    await sandbox.completeCheckoutSession(created.id, "authorized", { deliver: false });
    const paymentIntentId = defined(sandbox.checkoutSession(created.id)?.payment_intent) as string;

    const gateway = createStripePaymentGateway(stripe);
    await expect(gateway.retrieve(paymentIntentId)).resolves.toMatchObject({ state: "requires_capture" });
    await expect(gateway.capture(paymentIntentId, "capture-own")).resolves.toMatchObject({
      amountCaptured: 2500,
      alreadyCaptured: false,
    });
    await expect(gateway.refundInFull(paymentIntentId, "refund-own")).resolves.toMatchObject({
      amountRefunded: 2500,
    });
    const other = await authorizedPaymentIntent();
    await expect(gateway.voidAuthorization(other, "void-own")).resolves.toMatchObject({ outcome: "voided" });

    const events = createStripeEventSource(stripe, 5);
    const page = await events.page({ since: new Date(0), until: new Date(Date.now() + 60_000) });
    expect(page.events.length).toBeGreaterThan(0);
    const rejected = sandbox.requests.filter((request) => request.status === 400);
    expect(rejected.filter((request) => request.idempotencyKey?.endsWith("-own"))).toEqual([]);
  });
  it("accepts the service's Stripe Tax and promotion-code parameters, shipping options with them (decision 0204)", async () => {
    const checkout = createStripeCheckoutSessions(stripe, { captureMethod: "manual" });
    const created = await checkout.create({
      orderId: "0d7b0a52-4c3e-4f2a-8a55-1e1b4b0f6f21",
      customerId: "cus-8",
      email: "ada@example.com",
      currency: "eur",
      lines: [
        { sku: "MUG", name: "Mug", unitPrice: 1250, quantity: 2 },
        { sku: "TEA", name: "Tea", unitPrice: 990, quantity: 1 },
      ],
      successUrl: "https://shop.example/thanks",
      cancelUrl: "https://shop.example/cart",
      expiresAt: new Date(Date.now() + 60 * 60 * 1000),
      shipping: { allowedCountries: ["DE"], collectPhone: false },
      shippingOptions: [
        { rateId: "standard", displayName: "Standard", amount: 500, currency: "eur", deliveryEstimate: null },
      ],
      pricingTerms: {
        automaticTax: true,
        taxBehavior: "inclusive",
        allowPromotionCodes: true,
        taxCodes: { MUG: "txcd_99999999", TEA: "txcd_40060003" },
      },
    });
    const sent = sandbox.requests.filter((request) => request.endpoint === "checkout.sessions.create").at(-1);
    expect(sent?.status).toBe(200);
    expect(sent?.params).toMatchObject({
      automatic_tax: { enabled: "true" },
      allow_promotion_codes: "true",
      line_items: [
        { price_data: { tax_behavior: "inclusive", product_data: { tax_code: "txcd_99999999" } } },
        { price_data: { tax_behavior: "inclusive", product_data: { tax_code: "txcd_40060003" } } },
      ],
      shipping_options: [{ shipping_rate_data: { tax_behavior: "inclusive" } }],
    });
    const session = await stripe.checkout.sessions.retrieve(created.id);
    expect(session).toMatchObject({ allow_promotion_codes: true, automatic_tax: { enabled: true } });
  });
});
