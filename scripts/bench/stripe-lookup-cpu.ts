/**
 * `npx tsx scripts/bench/stripe-lookup-cpu.ts [--pairs 30] [--chunk 200] [--only user-agent|caller-stack]`:
 * the client CPU of the
 * webhook's Checkout Session lookup through stripe-node, with and without src/shims/stripe-request.ts,
 * in one process, in alternating chunks (pair by pair, the order flipped each pair), so that a
 * machine loaded by others moves both arms alike. Stripe is a stand-in in a child process that
 * answers every retrieve with the same expanded session (one line, its PaymentIntent, product and
 * shipping rate), 10 lookups in flight. Prints each arm's median CPU µs per lookup and the median
 * of the pairs' gains (`1 - shim / library`). A shim's figure on the path it serves is bench:shims';
 * this isolates the lookup, for a change too small for a loaded machine's webhook rows to show.
 */
import { spawn } from "node:child_process";
import Stripe from "stripe";
import { createStripeClient } from "../../src/payments/stripe-client";
import { breakdownExpansions } from "../../src/payments/money-breakdown";
import { withoutCallerStack } from "../../src/shims/stripe-request";

const flag = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive whole number`);
  return value;
};
const pairs = flag("pairs", 30);
const chunk = flag("chunk", 200);
const inFlight = 10;

const session = {
  id: "cs_bench",
  object: "checkout.session",
  mode: "payment",
  status: "complete",
  payment_status: "unpaid",
  client_reference_id: "6f1c2b9e-0d3a-4a53-9d61-2f0c7d9b1e42",
  metadata: { orderId: "6f1c2b9e-0d3a-4a53-9d61-2f0c7d9b1e42" },
  amount_subtotal: 1200,
  amount_total: 1700,
  currency: "usd",
  total_details: { amount_discount: 0, amount_shipping: 500, amount_tax: 0 },
  shipping_cost: {
    amount_subtotal: 500,
    amount_total: 500,
    amount_tax: 0,
    shipping_rate: { id: "shr_bench", object: "shipping_rate", display_name: "Ground", metadata: {} },
  },
  customer_details: { email: "bench@example.invalid", phone: null, name: "Bench Buyer" },
  payment_intent: {
    id: "pi_bench",
    object: "payment_intent",
    status: "requires_capture",
    amount: 1700,
    currency: "usd",
    capture_method: "manual",
    metadata: { orderId: "6f1c2b9e-0d3a-4a53-9d61-2f0c7d9b1e42" },
    customer: null,
    payment_method: "pm_bench",
    setup_future_usage: null,
  },
  line_items: {
    object: "list",
    has_more: false,
    url: "/v1/checkout/sessions/cs_bench/line_items",
    data: [
      {
        id: "li_bench",
        object: "item",
        description: "Bench mug",
        quantity: 1,
        currency: "usd",
        amount_subtotal: 1200,
        amount_discount: 0,
        amount_tax: 0,
        amount_total: 1200,
        price: {
          id: "price_bench",
          object: "price",
          currency: "usd",
          unit_amount: 1200,
          type: "one_time",
          product: { id: "prod_bench", object: "product", name: "Bench mug", metadata: { sku: "MUG-1" } },
        },
      },
    ],
  },
};

async function startStandIn(): Promise<{ url: string; stop: () => void }> {
  const body = JSON.stringify(session);
  const code = `
    const body = ${JSON.stringify(body)};
    const server = require("node:http").createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json", "request-id": "req_bench" }).end(body));
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"));
  `;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve) =>
    child.stdout.once("data", (data: Buffer) => resolve(data.toString().trim())),
  );
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

type Lookup = () => Promise<unknown>;

/** CPU µs per lookup of `count` lookups, `inFlight` at a time. */
async function cpuPerLookup(lookup: Lookup, count: number): Promise<number> {
  const started = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      await lookup();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

async function main(): Promise<void> {
  process.setSourceMapsEnabled(false); // as production runs (see webhook-target.ts)
  const standIn = await startStandIn();
  const base = new URL(standIn.url);
  const options = { timeoutMs: 8_000 };
  const shimmed = createStripeClient({ secretKey: "sk_test_bench", apiBase: standIn.url, ...options });
  // The library's own client, with the options createStripeClient gives it.
  const own = new Stripe("sk_test_bench", {
    timeout: 8_000,
    maxNetworkRetries: 0,
    telemetry: false,
    appInfo: { name: "order-fulfillment" },
    host: base.hostname,
    port: Number(base.port),
    protocol: "http",
  });
  const params = { expand: ["payment_intent", ...breakdownExpansions] };
  // --only: one half of the shim (the user agent built once, or no caller stack), the other left out.
  const only = process.argv[process.argv.indexOf("--only") + 1];
  const part = process.argv.includes("--only") ? only : "both";
  const client = part === "caller-stack" ? own : shimmed;
  const stackless = part !== "user-agent";
  const arms: Record<"library" | "shim", Lookup> = {
    library: () => own.checkout.sessions.retrieve("cs_bench", params),
    shim: () =>
      stackless
        ? withoutCallerStack(() => client.checkout.sessions.retrieve("cs_bench", params))
        : client.checkout.sessions.retrieve("cs_bench", params),
  };
  // Warm both paths before counting.
  await cpuPerLookup(arms.library, chunk * 2);
  await cpuPerLookup(arms.shim, chunk * 2);

  const results = { library: [] as number[], shim: [] as number[] };
  const gains: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const order: ("library" | "shim")[] = pair % 2 ? ["shim", "library"] : ["library", "shim"];
    const figures: Partial<Record<"library" | "shim", number>> = {};
    for (const arm of order) figures[arm] = await cpuPerLookup(arms[arm], chunk);
    results.library.push(figures.library as number);
    results.shim.push(figures.shim as number);
    gains.push(1 - (figures.shim as number) / (figures.library as number));
  }
  standIn.stop();
  const pct = (value: number) => `${(value * 100).toFixed(1)} %`;
  process.stdout.write(
    `shim part: ${part}; ${pairs} pairs of ${chunk} lookups, ${inFlight} in flight, client CPU µs per lookup (median): ` +
      `library ${median(results.library).toFixed(1)}, shim ${median(results.shim).toFixed(1)}; ` +
      `gain per pair median ${pct(median(gains))} (min ${pct(Math.min(...gains))}, max ${pct(Math.max(...gains))})\n`,
  );
}

void main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
