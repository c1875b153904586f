/**
 * The I/O-matched floor of `npm run bench:orders` (issue 43): what an order costs with the
 * product's essential I/O and nothing of the app's own logic. One minimal Inngest function with the
 * exact steps of a completed fulfil-order run (ids and ops read from the engine after the app's
 * run), served as floor-app.js serves the SDK floor (the app's compiled client and options,
 * serve() behind src/http/inngest-endpoint.ts, one pg pool of the app's size), doing the app's
 * external I/O through the same libraries and client set-ups against the same stand-ins:
 *
 * - Stripe (the app's createStripeClient): the checkout's `checkout.sessions.create` (POST
 *   /checkout, which the driver calls as it calls the app's), the webhook's
 *   `checkout.sessions.retrieve` with the PaymentIntent expanded (POST /placed, which then sends
 *   the order's event, as the app's intake does), and `paymentIntents.capture` in charge-card;
 * - EasyPost (@easypost/api through the app's createEasyPostClient): the address verification,
 *   the lookup by reference (a 404), the shipment and its purchase, in check-address (or in
 *   create-shipment when the shape has it apart, as before decision 0195);
 * - SMTP: two e-mails through nodemailer's pool, each composed whole and sent as one buffer, as
 *   src/notifications/smtp-transport.ts sends them (send-confirmation, send-review-request);
 * - PostgreSQL: `statements` hand-written statements an order (the app's count in the same run),
 *   one INSERT each, spread over the checkout, the placement and the run's steps.
 *
 * Plain CommonJS over dist/, as floor-app.js. argv[2]: JSON { port, databaseUrl, engineUrl,
 * stripeUrl, easyPostUrl, smtpUrl, statements, shape: { op, name }[] }.
 */
const path = require("node:path");
const express = require("express");
const { serve } = require("inngest/express");
const pg = require("pg");
const nodemailer = require("nodemailer");
const MailComposer = require("nodemailer/lib/mail-composer");

const dist = path.resolve(__dirname, "..", "..", "dist");
const { parseConfig } = require(path.join(dist, "config"));
const { createInngestClient } = require(path.join(dist, "inngest", "client"));
const { inngestEndpoint } = require(path.join(dist, "http", "inngest-endpoint"));
const { createLogger } = require(path.join(dist, "logger"));
const { createStripeClient } = require(path.join(dist, "payments", "stripe-client"));
const { lazyEasyPostClient } = require(path.join(dist, "shipping", "easypost-carrier"));

const options = JSON.parse(process.argv[2]);
const logger = createLogger({ level: "warn" });
const config = parseConfig({ NODE_ENV: "test", INNGEST_DEV: options.engineUrl });
const inngest = createInngestClient(config, { logger });
const db = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
const stripe = createStripeClient({ secretKey: "sk_test_bench", apiBase: options.stripeUrl });
// Made (and @easypost/api loaded) on first use, as the app does: both pay that load in the run.
const easyPost = lazyEasyPostClient({ apiKey: "EZTK_bench", apiBase: options.easyPostUrl });
const mail = nodemailer.createTransport({ url: options.smtpUrl, pool: true });

const runSteps = options.shape.filter((s) => s.op === "run");
/** Statements per place: the checkout, the placement, then each run step, as evenly as they go. */
const places = runSteps.length + 2;
const statementsAt = (index) =>
  Math.floor(options.statements / places) + (index < options.statements % places ? 1 : 0);
const sql = async (key, place) => {
  for (let i = 0; i < statementsAt(place); i++)
    await db.query("INSERT INTO bench_io_floor (key, place, n) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
      key,
      place,
      i,
    ]);
};
const shipmentApart = runSteps.some((s) => s.name === "create-shipment");
const address = {
  name: "Bench Buyer",
  street1: "417 Montgomery Street",
  street2: null,
  city: "San Francisco",
  state: "CA",
  zip: "94104",
  country: "US",
  phone: null,
};
const warehouse = { ...address, name: "Bench Warehouse", street1: "388 Townsend Street" };

async function ship(key) {
  const client = await easyPost();
  const reference = `${key}-1`;
  try {
    await client.Shipment.retrieve(reference);
  } catch (error) {
    if (!error || error.statusCode !== 404) throw error;
  }
  const shipment = await client.Shipment.create({
    reference,
    to_address: address,
    from_address: warehouse,
    parcel: { weight: 16 },
    options: { label_format: "PNG", print_custom_1: reference },
  });
  const cheapest = [...(shipment.rates || [])].sort((a, b) => Number(a.rate) - Number(b.rate))[0];
  await client.Shipment.buy(shipment.id, cheapest.id);
}

async function email(key, kind) {
  const message = new MailComposer({
    messageId: `<${key}-${kind}@bench.test>`,
    from: "Shop <shop@example.com>",
    to: `Buyer <${key}@example.com>`,
    subject: `Your order ${key}: ${kind}`,
    text: `Order ${key}: ${kind}.`,
    html: `<p>Order ${key}: ${kind}.</p>`,
  }).compile();
  await mail.sendMail({ envelope: message.getEnvelope(), raw: await message.build() });
}

/** The I/O of one run step, by the app's step id. */
async function stepIo(name, data) {
  if (name === "charge-card") {
    await stripe.paymentIntents.capture(data.paymentIntentId, {}, { idempotencyKey: `capture-${data.key}` });
  } else if (name === "check-address") {
    await (await easyPost()).Address.create({ ...address, verify: true });
    if (!shipmentApart) await ship(data.key);
  } else if (name === "create-shipment") {
    await ship(data.key);
  } else if (name === "send-confirmation") {
    await email(data.key, "confirmation");
  } else if (name === "send-review-request") {
    await email(data.key, "review");
  }
}

const floor = inngest.createFunction(
  { id: "io-floor-order", triggers: [{ event: "bench/io-floor.order" }], retries: 5 },
  async ({ event, step }) => {
    let place = 2;
    for (const { op, name } of options.shape) {
      if (op === "wait") {
        await step.waitForEvent(name, { event: "bench/io-floor.never", timeout: "14d" });
      } else if (op === "sleep") {
        await step.sleep(name, "3d");
      } else {
        const at = place++;
        await step.run(name, async () => {
          await sql(event.data.key, at);
          await stepIo(name, event.data);
          return at;
        });
      }
    }
    return { key: event.data.key };
  },
);

const app = express();
app.disable("x-powered-by");
app.use(express.json());
// The checkout: the session the customer pays at.
app.post("/checkout", async (req, res, next) => {
  try {
    const key = req.body.key;
    await sql(key, 0);
    const session = await stripe.checkout.sessions.create(
      {
        mode: "payment",
        line_items: [
          {
            price_data: { currency: "usd", unit_amount: 1000, product_data: { name: "Bench item" } },
            quantity: 1,
          },
        ],
        client_reference_id: key,
        customer_email: `${key}@example.com`,
        customer_creation: "always",
        metadata: { orderId: key },
        payment_intent_data: { capture_method: "manual", metadata: { orderId: key } },
        success_url: "http://shop.test/done",
        cancel_url: "http://shop.test/cancel",
      },
      { idempotencyKey: `checkout-session-${key}` },
    );
    res.status(201).json({ checkoutSessionId: session.id });
  } catch (error) {
    next(error);
  }
});
// The paid checkout's webhook: the session read back, the order placed, its event sent.
app.post("/placed", async (req, res, next) => {
  try {
    const key = req.body.key;
    const session = await stripe.checkout.sessions.retrieve(req.body.checkoutSessionId, {
      expand: ["payment_intent"],
    });
    await sql(key, 1);
    const paymentIntentId =
      typeof session.payment_intent === "string" ? session.payment_intent : session.payment_intent.id;
    await inngest.send({ name: "bench/io-floor.order", data: { key, paymentIntentId } });
    res.json({ received: true });
  } catch (error) {
    next(error);
  }
});
app.use(
  "/api/inngest",
  inngestEndpoint({
    serve: serve({ client: inngest, functions: [floor] }),
    signaturesRequired: inngest.mode === "cloud",
    originPinned: false,
    logger,
  }),
);
const server = app.listen(options.port, "127.0.0.1", () => process.send({ type: "ready" }));
process.on("disconnect", () => server.close(() => db.end().then(() => process.exit(0))));
