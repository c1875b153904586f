/**
 * `npm run bench:orders [-- --orders 200,1000 --app-processes 1,2 --modes classic,checkpointing
 * --cron-interval-ms 60000 --memory --tsx --cpu-prof <dir> --database-url postgresql://...]`
 * (default: an embedded PostgreSQL started for the run)
 *
 * Orders fulfilled end to end: checkout through our API, the customer completing it in the Stripe
 * stand-in, the signed webhook, shop/order.placed, and every fulfil-order step driven by the local
 * engine over HTTP against serve(), until each order is `completed`. The app runs as production
 * runs it, compiled (`npm run build`, then `node dist/server.js`; `--tsx` runs src/server.ts
 * through tsx instead), and the engine in a process of its own, so their CPU time is read apart;
 * the driver, the Stripe stand-in and the SMTP sink run here. The engine's clock runs ten million
 * times faster so the 14-day wait and 3-day sleep pass in a fraction of a second (see
 * scripts/bench/engine-time-scale.ts for why not faster). Every order has its own customer,
 * so the per-customer concurrency limit does not serialise them.
 *
 * Beside each app run, in the same process set-up, the floor reference (scripts/bench/floor-app.js):
 * a minimal Inngest function with the same steps as the real run's fulfil-order (read from the
 * engine), each doing one statement, served by the same compiled client and serve() set-up, as
 * many processes as the app had, on the same engine. `app-floor-ratio: <app CPU per order / floor
 * CPU per order>` is printed per mode and app-process count; the last line is the default mode's
 * (checkpointing, one app process).
 *
 * Then the I/O-matched floor (scripts/bench/io-floor-app.js, issue 43): the same steps, by id, doing
 * the app's external I/O and nothing else (the Stripe calls through the app's Stripe client, the
 * EasyPost calls through @easypost/api, two e-mails through nodemailer, each against a stand-in of
 * the app's kind, and as many hand-written SQL statements an order as the app sent in the run), on
 * the same SDK, options and engine. `app-io-floor-ratio:` (app CPU / I/O floor CPU per order) and
 * `stack-io-floor-ratio:` ((app + engine + PostgreSQL CPU) / the same for the I/O floor) are printed
 * per mode and process count, before each `app-floor-ratio:`; the default mode's lines come last.
 *
 * `--orders` takes one or more sizes: each mode and process count runs once per size, on fresh
 * databases, and prints PostgreSQL's table counters (sequential scans, rows read by them, rows
 * fetched by index) per order for the main tables, which must stay flat from one size to the next.
 * `--memory` runs one 5,000-order run (checkpointing, one app process, --expose-gc in the app)
 * reporting the app's heap after a full GC and its RSS every 1,000 orders.
 *
 * With N > 1 app processes the app runs as N processes on one database, as stateless replicas do
 * in production: the engine spreads its serve() calls over them round-robin (what a load balancer
 * in front of them does), and the driver spreads checkouts and the Stripe webhooks likewise.
 * Per-order figures of the app are summed over its processes. Beside them: the load average, how
 * busy the whole machine was, and the CPU of PostgreSQL and of this driver process, so a slow run
 * can be told from a starved one.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import http from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { parseArgs } from "node:util";
import { Client } from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { SMTPServer } from "smtp-server";
import { migrate } from "../src/db/migrator";
import { benchDatabaseServer } from "./bench/database-server";
import { engineClockLimitSeconds, engineTimeScale } from "./bench/engine-time-scale";
import { coreCount, loadAverage, machineCpuMs, processTreeCpuMs } from "./bench/process-cpu";
import { seedEarlierOrders } from "./bench/earlier-orders";
import {
  tableCounters,
  tableCounterDelta,
  type TableCounter,
  type TableCounters,
} from "./bench/table-counters";
import { createEasyPostSandbox } from "../src/dev/easypost-sandbox";
import { createStripeSandbox } from "../src/dev/stripe-sandbox";
import { PrismaClient } from "../src/generated/prisma/client";
import { createLogger } from "../src/logger";
import { parseCron } from "../src/dev/inngest-engine/cron";

const { values: args } = parseArgs({
  options: {
    // One size or several (comma-separated): each mode and process count runs once per size.
    orders: { type: "string", default: "200,1000" },
    "database-url": { type: "string" },
    // Checkouts at a time; above the app's pool (10) they queue for a connection (503 past its timeout).
    concurrency: { type: "string", default: "10" },
    // A folder: the app and engine processes run with `node --cpu-prof` and write their profiles
    // in one folder per process and run there (app<i>-<mode>-n<N>/, engine-<mode>-n<N>/).
    "cpu-prof": { type: "string" },
    // App processes behind the engine, one run per count (comma-separated).
    "app-processes": { type: "string", default: "1,2" },
    modes: { type: "string", default: "classic,checkpointing" },
    // At ten million times real time every cron is due at every instant; the engine fires each at
    // most once per this many real ms. Production's most frequent cron (drain-email-outbox)
    // fires once a minute, hence the default: cron runs then cost per order what they cost in
    // production, instead of growing with the run's length.
    "cron-interval-ms": { type: "string", default: "60000" },
    // The app through tsx (src/server.ts) instead of the compiled dist/ production runs.
    tsx: { type: "boolean", default: false },
    // dist/ as it is, without `npm run build` first (it must be current).
    "no-build": { type: "boolean", default: false },
    // One run of 5,000 orders (or --orders): heap after GC and RSS every 1,000 orders.
    memory: { type: "boolean", default: false },
    // Statements of the app by text, per order, largest first (the probe records them).
    "statement-texts": { type: "boolean", default: false },
    "lock-samples": { type: "boolean", default: false },
    // Completed orders already in `orders` when the run starts, analysed, as a shop's database
    // has them: on a near-empty table every lookup is rightly a sequential scan (0 for none).
    "earlier-orders": { type: "string", default: "2000" },
    // Orders of the executions phase (production configuration: FULFILMENT_HOLD=30m, each
    // delivered by the carrier's webhook, reviewed); 0 skips the phase.
    "production-orders": { type: "string", default: "3" },
    // The burst, after the executions phase on its app: this many signed first deliveries of
    // checkout.session.completed, 50 in flight; 0 skips it.
    burst: { type: "string", default: "200" },
  },
});
const sizes = (args.memory && args.orders === "200,1000" ? "5000" : args.orders).split(",").map(Number);
const checkoutConcurrency = Number(args.concurrency);
const cronIntervalMs = Number(args["cron-interval-ms"]);
const earlierOrders = Number(args["earlier-orders"]);
const productionOrders = Number(args["production-orders"]);
const burstSize = Number(args.burst);
const appProcessCounts = args.memory ? [1] : args["app-processes"].split(",").map(Number);
const modes = args.memory ? ["checkpointing"] : args.modes.split(",");
if (
  !sizes.every((n) => Number.isInteger(n) && n >= 1) ||
  !Number.isInteger(checkoutConcurrency) ||
  checkoutConcurrency < 1 ||
  !Number.isInteger(cronIntervalMs) ||
  cronIntervalMs < 0 ||
  !Number.isInteger(earlierOrders) ||
  earlierOrders < 0 ||
  !Number.isInteger(productionOrders) ||
  productionOrders < 0 ||
  !Number.isInteger(burstSize) ||
  burstSize < 0 ||
  !appProcessCounts.every((n) => Number.isInteger(n) && n >= 1)
) {
  process.stderr.write(
    "bench:orders: --orders and --app-processes (comma-separated) and --concurrency take positive whole numbers, --cron-interval-ms and --earlier-orders whole numbers\n",
  );
  process.exit(2);
}
if (modes.length === 0 || !modes.every((mode) => mode === "classic" || mode === "checkpointing")) {
  process.stderr.write("bench:orders: --modes takes classic, checkpointing or both (comma-separated)\n");
  process.exit(2);
}
const root = path.resolve(__dirname, "..");
/** Each app process's whole log (stdout and stderr), one file per process and run. */
const logDir = path.join(os.tmpdir(), `bench-orders-${new Date().toISOString().replace(/[:.]/g, "-")}`);
/** Real seconds a run may last before the engine's clock passes what PostgreSQL reads. */
const clockLimitSeconds = engineClockLimitSeconds(engineTimeScale);
/** No e-mail for this long: the run has stalled; it stops, saying how far it got. */
const stallAfterMs = 180_000;
const webhookSecret = "whsec_bench_secret";
const easyPostWebhookSecret = "bench-easypost-webhook-secret-0123456789";

async function withAdmin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function startSmtpSink(): Promise<{ url: string; close(): Promise<void>; received: () => number }> {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      stream.on("data", () => undefined);
      stream.on("end", () => {
        received += 1;
        callback();
      });
    },
  });
  // A client's connection reset (the app's SMTP pool closing an idle socket) is the client's
  // business; unhandled, it ended the whole benchmark at 1,000 of 5,000 orders.
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function pool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A child process spoken to over IPC: one request, one typed answer. */
class Child {
  private readonly waiters: ((message: Record<string, unknown>) => void)[] = [];
  /** The last of the child's stdout and stderr (all of it is in `logFile`, when one is given). */
  output = "";
  private log: WriteStream | undefined;

  constructor(
    readonly process: ChildProcess,
    readonly logFile?: string,
  ) {
    if (logFile) {
      mkdirSync(path.dirname(logFile), { recursive: true });
      this.log = createWriteStream(logFile);
      process.once("exit", () => this.log?.end());
    }
    process.on("message", (message: Record<string, unknown>) => this.waiters.shift()?.(message));
    const keep = (chunk: Buffer) => {
      const text = chunk.toString();
      this.log?.write(chunk);
      this.written += text.length;
      // A 5,000-order run logs for minutes: the tail says what went wrong, the file the rest.
      this.output = (this.output + text).slice(-64_000);
    };
    process.stdout?.on("data", keep);
    process.stderr?.on("data", keep);
  }

  /** Characters the child has written so far: a mark for `lastProblemSince`. */
  written = 0;

  /**
   * The child's last log line at warn level or above since the mark `from`: a failed answer can
   * reach us before the line the child logged about it, which comes down a pipe of its own, so
   * it is waited for (2 s at most).
   */
  async lastProblemSince(from: number): Promise<string | undefined> {
    for (let waited = 0; ; waited += 50) {
      const since = this.output.slice(Math.max(0, this.output.length - (this.written - from)));
      // Requests of other orders log beside it: the error handler's own line first.
      const lines = since.split("\n").reverse();
      const problem =
        lines.find((line) => /"msg":"request (failed|refused)/.test(line)) ??
        lines.find((line) => /"level":(40|50|60)/.test(line));
      if (problem || waited >= 2000) return problem;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`child exited (${code}):\n${this.output}`));
      this.process.once("exit", onExit);
      this.waiters.push((message) => {
        this.process.off("exit", onExit);
        resolve(message);
      });
    });
  }

  async ask(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const answer = this.next();
    this.process.send(message);
    return answer;
  }
}

function spawnNode(args: string[], env?: Record<string, string>, logFile?: string): Child {
  return new Child(
    spawn(process.execPath, args, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // eslint-disable-next-line no-restricted-properties -- the child needs PATH to find node
      env: env ? { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } : undefined,
    }),
    logFile,
  );
}

interface Figures {
  mode: string;
  appProcesses: number;
  orders: number;
  seconds: number;
  ordersPerSecond: number;
  serveCalls: number;
  checkpoints: number;
  engineStatements: number;
  appStatements: number;
  appCpuMs: number;
  engineCpuMs: number;
  /** This process: the driver, the Stripe stand-in and the SMTP sink. */
  driverCpuMs: number;
  /** The PostgreSQL server (every database on it); undefined with --database-url. */
  postgresCpuMs: number | undefined;
  /** Runs of functions other than fulfil-order (crons and their follow-ups) during the run. */
  otherRuns: number;
  loadBefore: number;
  loadAfter: number;
  /** Share of all cores busy (every process on the machine) during the run. */
  machineBusy: number | undefined;
  emails: number;
  /** Checkouts answered 503 (busy, retried with the same Idempotency-Key). */
  checkoutRetries: number;
  /** Webhooks answered 5xx and redelivered, with what the app logged for them. */
  webhookFailures: WebhookFailures;
  /** Engine statements per order by name, largest first. */
  engineStatementsByName: [string, number][];
  /** App statements per order by text (--statement-texts), largest first. */
  appStatementsByText: [string, number][];
  /** pg_stat_statements per order over the run (the app's database), by total time, largest first. */
  statements: StatementFigures[];
  /** pg_stat_user_tables per order over the run. */
  tables: TableCounters;
  /** --lock-samples: backends found waiting on a lock, by what waits, on which lock, behind what. */
  lockWaits?: LockWaits;
  /** fulfil-order's ops in one completed run, in order: what the floor mirrors. */
  shape: Shape;
  /** --memory: the app's heap after GC and RSS, MB, at every 1,000 orders completed. */
  memory: { completed: number; heapMb: number; rssMb: number }[];
  /** The driver's own looks at `orders` (one scan each) during the run, taken off `tables`. */
  databasePolls: number;
  /** The app's socket writes per order, by the peer they went to (the probe counts them). */
  socketWrites: PeerWrites;
  floor?: FloorFigures;
  /** fulfil-order's steps in one completed run, in order, with their ids: what the I/O floor mirrors. */
  steps: ShapeStep[];
  /** The I/O-matched floor (scripts/bench/io-floor-app.js), run right after the SDK floor. */
  ioFloor?: FloorFigures;
}

/** One statement's share of PostgreSQL's work per order (pg_stat_statements). */
interface StatementFigures {
  calls: number;
  /** Times it was planned: a named statement on a generic plan runs without one. */
  plans: number;
  execMs: number;
  planMs: number;
  rows: number;
  /** Shared buffers found in the cache plus read in: pages touched, whatever the load. */
  blocks: number;
  /** false: run from inside another statement (a trigger's, a function's), its time in its caller's. */
  toplevel: boolean;
  query: string;
}

/**
 * pg_stat_statements of one database, when the server loads it (the embedded one does; a given
 * `--database-url` may not): undefined otherwise.
 */
async function statementStats(databaseUrl: string): Promise<Map<string, StatementFigures> | undefined> {
  return withAdmin(databaseUrl, async (c) => {
    try {
      await c.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      const { rows } = await c.query<{
        id: string;
        calls: string;
        plans: string;
        exec: number;
        plan: number;
        rows: string;
        blocks: string;
        toplevel: boolean;
        query: string;
      }>(
        `SELECT queryid::text || '/' || toplevel::text AS id, calls::text, plans::text,
                total_exec_time AS exec, total_plan_time AS plan, rows::text,
                (shared_blks_hit + shared_blks_read)::text AS blocks, toplevel, query
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      return new Map(
        rows.map((r) => [
          r.id,
          {
            calls: Number(r.calls),
            plans: Number(r.plans),
            execMs: Number(r.exec),
            planMs: Number(r.plan),
            rows: Number(r.rows),
            blocks: Number(r.blocks),
            toplevel: r.toplevel,
            query: r.query,
          },
        ]),
      );
    } catch {
      return undefined;
    }
  });
}

function statementsPerOrder(
  before: Map<string, StatementFigures> | undefined,
  after: Map<string, StatementFigures> | undefined,
  orders: number,
): StatementFigures[] {
  if (!after) return [];
  return [...after]
    .map(([id, a]) => {
      const b = before?.get(id);
      return {
        calls: (a.calls - (b?.calls ?? 0)) / orders,
        plans: (a.plans - (b?.plans ?? 0)) / orders,
        execMs: (a.execMs - (b?.execMs ?? 0)) / orders,
        planMs: (a.planMs - (b?.planMs ?? 0)) / orders,
        rows: (a.rows - (b?.rows ?? 0)) / orders,
        blocks: (a.blocks - (b?.blocks ?? 0)) / orders,
        toplevel: a.toplevel,
        query: a.query.replace(/\s+/g, " ").slice(0, 140),
      };
    })
    .filter((s) => s.calls > 0)
    .sort((x, y) => y.execMs + y.planMs - (x.execMs + x.planMs));
}

/** Socket writes per order (or floor run) by peer name, in `peerOrder`. */
type PeerWrites = [string, number][];

/** The peers a process writes to, in the order they are printed. */
const peerOrder = [
  "PostgreSQL",
  "engine (events, checkpoints)",
  "answers to HTTP (serve(), shop)",
  "Stripe",
  "EasyPost",
  "SMTP",
  "other",
];

/**
 * Names the probe's `out:<port>` / `in:<port>` keys from the URLs a run handed out: the peers the
 * app and the floor share (the database, the engine, the HTTP they answer), then the app's others.
 */
function peerNames(
  shared: { databaseUrl: string; engineUrl: string; servedUrls: string[] },
  others: { name: string; url: string }[] = [],
): Map<string, string> {
  const outTo = (url: string) => `out:${new URL(url).port}`;
  return new Map([
    [outTo(shared.databaseUrl), "PostgreSQL"],
    [outTo(shared.engineUrl), "engine (events, checkpoints)"],
    ...shared.servedUrls.map((url): [string, string] => [
      `in:${new URL(url).port}`,
      "answers to HTTP (serve(), shop)",
    ]),
    ...others.map(({ name, url }): [string, string] => [outTo(url), name]),
  ]);
}

function socketWritesPerUnit(
  before: Record<string, number>,
  after: Record<string, number>,
  names: Map<string, string>,
  count: number,
): PeerWrites {
  const byPeer = new Map<string, number>();
  for (const [key, n] of Object.entries(after)) {
    const name = names.get(key) ?? "other";
    byPeer.set(name, (byPeer.get(name) ?? 0) + (n - (before[key] ?? 0)) / count);
  }
  return peerOrder.filter((name) => byPeer.has(name)).map((name) => [name, byPeer.get(name) ?? 0]);
}

const totalWrites = (writes: PeerWrites): number => writes.reduce((sum, [, n]) => sum + n, 0);

type Shape = ("run" | "wait" | "sleep")[];
type ShapeStep = { op: Shape[number]; name: string };

interface FloorFigures {
  seconds: number;
  cpuMs: number;
  statements: number;
  serveCalls: number;
  checkpoints: number;
  engineCpuMs: number;
  /** The PostgreSQL server's CPU per run (the I/O floor only; undefined with --database-url). */
  postgresCpuMs?: number;
  socketWrites: PeerWrites;
  /** pg_stat_statements per run of its database (the I/O floor only), largest first. */
  byStatement?: StatementFigures[];
}

/** Deliveries a 5xx answer is followed by, at most, before the run gives up on the event. */
const webhookRedeliveries = 8;

/** What the run saw of the app's 5xx answers to webhooks, redelivered as Stripe does. */
interface WebhookFailures {
  redeliveries: number;
  /** The app's log line for each 5xx (its error's text), by how often it came. */
  causes: Map<string, number>;
}

/** The part of a log line that says what failed: level, message, error code and message. */
function causeOf(line: string | undefined): string {
  if (!line) return "(no warn or error line logged within 2 s)";
  try {
    const entry = JSON.parse(line) as {
      msg?: string;
      code?: string;
      cause?: unknown;
      err?: { type?: string; message?: string; code?: string; cause?: { message?: string; code?: string } };
    };
    const err = entry.err;
    return [
      entry.msg,
      entry.code,
      typeof entry.cause === "string" ? entry.cause : undefined,
      err && `${err.type ?? "Error"}${err.code ? ` ${err.code}` : ""}: ${err.message ?? ""}`,
      err?.cause && `cause ${err.cause.code ?? ""} ${err.cause.message ?? ""}`.trim(),
    ]
      .filter(Boolean)
      .join(" | ");
  } catch {
    return line.slice(0, 500);
  }
}

/**
 * A checkout's Stripe events, signed as Stripe signs them, POSTed to one app process. A 5xx is
 * what Stripe answers with a redelivery (with a backoff of hours; here of a fraction of a second
 * per attempt, re-signed as Stripe re-signs each attempt); it is counted, and the app's log line
 * for it kept. A 4xx, or a 5xx on every attempt, ends the run.
 */
async function deliverWebhooks(
  sandbox: ReturnType<typeof createStripeSandbox>,
  events: { id: string }[],
  appUrl: string,
  app: Child,
  failures: WebhookFailures,
): Promise<void> {
  for (const event of events) {
    for (let attempt = 0; ; attempt++) {
      const { payload, header } = sandbox.signedDelivery(event.id);
      const mark = app.written;
      const res = await fetch(`${appUrl}/api/stripe/webhook`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": header },
        body: payload,
      });
      const text = await res.text();
      if (res.status < 300) break;
      const cause = causeOf(await app.lastProblemSince(mark));
      if (res.status < 500 || attempt >= webhookRedeliveries)
        throw new Error(
          `webhook answered ${res.status} (delivery ${attempt + 1}): ${text}\nthe app logged: ${cause}` +
            (app.logFile ? `\nthe app's whole log: ${app.logFile}` : ""),
        );
      failures.redeliveries += 1;
      failures.causes.set(cause, (failures.causes.get(cause) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** Math.min(attempt, 4)));
    }
  }
}

/** The app as production runs it (dist/), or through tsx with --tsx; the probe preloaded in both. */
function appCommand(exposeGc: boolean): string[] {
  const gc = exposeGc ? ["--expose-gc"] : [];
  return args.tsx
    ? [...gc, "--import", "tsx", "--require", "./scripts/bench/app-probe.js", "src/server.ts"]
    : [...gc, "--require", "./scripts/bench/app-probe.js", "dist/server.js"];
}

async function startEngine(
  databaseUrl: string,
  checkpointing: boolean,
  replicaOrigins: string[],
  profileArgs: string[],
  logFile?: string,
  cronMinRealIntervalMs = cronIntervalMs,
): Promise<{ engine: Child; url: string }> {
  const engine = spawnNode(
    [
      ...profileArgs,
      "--import",
      "tsx",
      "scripts/bench/engine-process.ts",
      JSON.stringify({
        databaseUrl,
        checkpointing,
        timeScale: engineTimeScale,
        cronMinRealIntervalMs,
        appReplicaOrigins: replicaOrigins.length > 1 ? replicaOrigins : [],
      }),
    ],
    undefined,
    logFile,
  );
  const ready = await engine.next();
  return { engine, url: String(ready.url) };
}

async function scratchDatabase(adminUrl: string, tag: string): Promise<{ name: string; url: string }> {
  const name = `of_bench_${tag}_${Date.now()}`;
  await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

const statsOf = async (children: Child[]) => {
  const answers = await Promise.all(children.map((child) => child.ask({ type: "stats" })));
  const byText: Record<string, number> = {};
  const socketWrites: Record<string, number> = {};
  for (const answer of answers)
    for (const [key, n] of Object.entries((answer.socketWrites as Record<string, number> | undefined) ?? {}))
      socketWrites[key] = (socketWrites[key] ?? 0) + n;
  for (const answer of answers)
    for (const [text, n] of Object.entries((answer.byText as Record<string, number> | undefined) ?? {}))
      byText[text] = (byText[text] ?? 0) + n;
  return {
    statements: answers.reduce((sum, a) => sum + Number(a.statements), 0),
    cpuMs: answers.reduce((sum, a) => sum + Number(a.cpuMs), 0),
    byText,
    socketWrites,
  };
};

const stat = (m: Record<string, unknown>, key: string): number =>
  Number((m.stats as Record<string, number>)[key]);

/**
 * The floor: `count` runs of the minimal function with fulfil-order's shape, on a fresh database
 * and a fresh engine of the same options, served by `processes` floor processes, driven with the
 * same number of runs in flight as the app's checkouts.
 */
async function runFloor(
  adminUrl: string,
  checkpointing: boolean,
  processes: number,
  count: number,
  shape: Shape,
): Promise<FloorFigures> {
  const database = await scratchDatabase(adminUrl, "floor");
  const children: Child[] = [];
  try {
    await withAdmin(database.url, (c) =>
      c.query(
        "CREATE TABLE bench_floor_steps (key text NOT NULL, step int NOT NULL, PRIMARY KEY (key, step))",
      ),
    );
    const ports: number[] = [];
    for (let i = 0; i < processes; i++) ports.push(await freePort());
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const { engine, url: engineUrl } = await startEngine(database.url, checkpointing, urls, []);
    children.push(engine);
    const floors = ports.map((port) =>
      spawnNode(
        [
          "--require",
          "./scripts/bench/app-probe.js",
          "scripts/bench/floor-app.js",
          JSON.stringify({ port, databaseUrl: database.url, engineUrl, shape }),
        ],
        { NODE_ENV: "test" },
      ),
    );
    children.push(...floors);
    await Promise.all(floors.map((floor) => floor.next()));
    await engine.ask({ type: "sync", url: `${urls[0]}/api/inngest` });

    const completedRuns = () =>
      withAdmin(database.url, async (c) => {
        const { rows } = await c.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM inngest_local.runs WHERE function_id LIKE '%floor-order' AND status = 'Completed'",
        );
        return rows[0]?.n ?? 0;
      });
    const engineBefore = await engine.ask({ type: "stats" });
    const before = await statsOf(floors);
    const started = performance.now();
    // As many runs in flight as the app's checkouts: one sent, one done.
    let sent = 0;
    let done = 0;
    const send = async (n: number) => {
      const res = await fetch(`${engineUrl}/e/local`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(
          Array.from({ length: n }, () => ({ name: "bench/floor.order", data: { key: `floor-${sent++}` } })),
        ),
      });
      if (res.status >= 300) throw new Error(`event API answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    await send(Math.min(checkoutConcurrency, count));
    while (done < count) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done = await completedRuns();
      const room = Math.min(count - sent, done + checkoutConcurrency - sent);
      if (room > 0) await send(room);
    }
    const seconds = (performance.now() - started) / 1000;
    const after = await statsOf(floors);
    const engineAfter = await engine.ask({ type: "stats" });
    await engine.ask({ type: "close" }).catch(() => undefined);
    return {
      seconds,
      cpuMs: (after.cpuMs - before.cpuMs) / count,
      statements: (after.statements - before.statements) / count,
      serveCalls: (stat(engineAfter, "calls") - stat(engineBefore, "calls")) / count,
      checkpoints: (stat(engineAfter, "checkpoints") - stat(engineBefore, "checkpoints")) / count,
      engineCpuMs: (Number(engineAfter.cpuMs) - Number(engineBefore.cpuMs)) / count,
      socketWrites: socketWritesPerUnit(
        before.socketWrites,
        after.socketWrites,
        peerNames({ databaseUrl: database.url, engineUrl, servedUrls: urls }),
        count,
      ),
    };
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
    await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${database.name}" WITH (FORCE)`));
  }
}

/**
 * The I/O-matched floor (issue 43): `count` orders through scripts/bench/io-floor-app.js, a minimal
 * function with fulfil-order's steps (`steps`, ids included) doing the app's external I/O: the
 * Stripe, EasyPost and SMTP calls of an order, against stand-ins of the same kind as the app's
 * (fresh ones, as the database and engine are), and `statements` hand-written SQL statements (the
 * app's count per order in the same run). Each order is driven as the app's are: the checkout
 * (POST /checkout), the customer completing it in the Stripe stand-in, the placement (POST
 * /placed, which sends the event), with as many checkouts at a time. Besides the floor's and the
 * engine's CPU, PostgreSQL's (the server's process tree) is read, as for the app.
 */
async function runIoFloor(
  server: { url: string; pid?: number },
  checkpointing: boolean,
  processes: number,
  count: number,
  steps: ShapeStep[],
  statements: number,
): Promise<FloorFigures> {
  const adminUrl = server.url;
  const database = await scratchDatabase(adminUrl, "iofloor");
  const logger = createLogger({ level: "warn" });
  const smtp = await startSmtpSink();
  const sandbox = createStripeSandbox({ webhookSecret, logger });
  const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;
  const easyPost = createEasyPostSandbox({ webhookSecret: easyPostWebhookSecret, logger });
  await easyPost.listen(0, "127.0.0.1");
  const children: Child[] = [];
  try {
    await withAdmin(database.url, (c) =>
      c.query(
        "CREATE TABLE bench_io_floor (key text NOT NULL, place int NOT NULL, n int NOT NULL, PRIMARY KEY (key, place, n))",
      ),
    );
    const ports: number[] = [];
    for (let i = 0; i < processes; i++) ports.push(await freePort());
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    const { engine, url: engineUrl } = await startEngine(database.url, checkpointing, urls, []);
    children.push(engine);
    const floors = ports.map((port) =>
      spawnNode(
        [
          "--require",
          "./scripts/bench/app-probe.js",
          "scripts/bench/io-floor-app.js",
          JSON.stringify({
            port,
            databaseUrl: database.url,
            engineUrl,
            stripeUrl,
            easyPostUrl: easyPost.apiBase ?? "",
            smtpUrl: smtp.url,
            statements,
            shape: steps,
          }),
        ],
        { NODE_ENV: "test" },
      ),
    );
    children.push(...floors);
    await Promise.all(floors.map((floor) => floor.next()));
    await engine.ask({ type: "sync", url: `${urls[0]}/api/inngest` });

    const completedRuns = () =>
      withAdmin(database.url, async (c) => {
        const { rows } = await c.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM inngest_local.runs WHERE function_id LIKE '%io-floor-order' AND status = 'Completed'",
        );
        return rows[0]?.n ?? 0;
      });
    const postgresCpuMs = (): number | undefined =>
      server.pid === undefined ? undefined : processTreeCpuMs(server.pid);
    const engineBefore = await engine.ask({ type: "stats" });
    const before = await statsOf(floors);
    const statementsBefore = await statementStats(database.url);
    const postgresBefore = postgresCpuMs();
    const started = performance.now();
    const post = async (url: string, body: Record<string, unknown>) => {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`I/O floor ${url} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    await pool(
      Array.from({ length: count }, (_, i) => i),
      checkoutConcurrency,
      async (i) => {
        const url = urls[i % urls.length] ?? "";
        const key = `io-floor-${i}`;
        const { checkoutSessionId } = await post(`${url}/checkout`, { key });
        await sandbox.completeCheckoutSession(String(checkoutSessionId), "authorized", { deliver: false });
        await post(`${url}/placed`, { key, checkoutSessionId });
      },
    );
    // Watched by the e-mails the sink received (the review request is sent in the last step), and
    // only then in the database, as the app's run is: a look every few ms, each on a connection of
    // its own, would be PostgreSQL CPU charged to the floor.
    let progress = { at: performance.now(), what: "" };
    const give = (what: string) => {
      if (what !== progress.what) progress = { at: performance.now(), what };
      else if (performance.now() - progress.at > stallAfterMs)
        throw new Error(`the I/O floor stalled: ${what} for ${stallAfterMs / 1000} s`);
    };
    while (smtp.received() < 2 * count) {
      give(`${smtp.received()} of ${2 * count} e-mails`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    for (let done = await completedRuns(); done < count; done = await completedRuns()) {
      give(`${done} of ${count} runs completed`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (performance.now() - started) / 1000;
    const after = await statsOf(floors);
    const postgresAfter = postgresCpuMs();
    const statementsAfter = await statementStats(database.url);
    const engineAfter = await engine.ask({ type: "stats" });
    await engine.ask({ type: "close" }).catch(() => undefined);
    return {
      byStatement: statementsPerOrder(statementsBefore, statementsAfter, count),
      seconds,
      cpuMs: (after.cpuMs - before.cpuMs) / count,
      statements: (after.statements - before.statements) / count,
      serveCalls: (stat(engineAfter, "calls") - stat(engineBefore, "calls")) / count,
      checkpoints: (stat(engineAfter, "checkpoints") - stat(engineBefore, "checkpoints")) / count,
      engineCpuMs: (Number(engineAfter.cpuMs) - Number(engineBefore.cpuMs)) / count,
      postgresCpuMs:
        postgresBefore === undefined || postgresAfter === undefined
          ? undefined
          : (postgresAfter - postgresBefore) / count,
      socketWrites: socketWritesPerUnit(
        before.socketWrites,
        after.socketWrites,
        peerNames({ databaseUrl: database.url, engineUrl, servedUrls: urls }, [
          { name: "Stripe", url: stripeUrl },
          ...(easyPost.apiBase ? [{ name: "EasyPost", url: easyPost.apiBase }] : []),
          { name: "SMTP", url: smtp.url },
        ]),
        count,
      ),
    };
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
    await sandbox.close();
    await easyPost.close();
    await smtp.close();
    await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${database.name}" WITH (FORCE)`));
  }
}

/** --lock-samples: how often the app's database is looked at for backends waiting on a lock. */
const lockSampleIntervalMs = 20;

/** Lock waits seen by sampling pg_stat_activity and pg_locks, keyed by waiter / lock / blocker. */
interface LockWaits {
  samples: number;
  intervalMs: number;
  /** Per key: how many samples found a backend waiting so (each stands for one interval of waiting). */
  seen: Map<string, number>;
}

/** A statement's text for a sample: its first words, whitespace folded, enough to tell it apart. */
const statementHead = (text: string | null): string => (text ?? "?").replace(/\s+/g, " ").trim().slice(0, 90);

/**
 * Every `lockSampleIntervalMs`, the backends of the database waiting on a heavyweight lock: what
 * they run, the lock they wait for (type and mode) and what the backends blocking them run. A
 * sample is a moment, so samples x interval estimate the time spent waiting so. Costs PostgreSQL
 * a little CPU of its own: off unless asked for (--lock-samples).
 */
function sampleLockWaits(databaseUrl: string): { stop(): Promise<LockWaits> } {
  const waits: LockWaits = { samples: 0, intervalMs: lockSampleIntervalMs, seen: new Map() };
  const client = new Client({ connectionString: databaseUrl });
  client.on("error", () => undefined);
  let stopped = false;
  const loop = (async () => {
    await client.connect();
    while (!stopped) {
      const { rows } = await client.query<{
        waiting: string | null;
        lock: string | null;
        blocker: string | null;
      }>(
        `SELECT w.query AS waiting,
                (SELECT l.locktype || ' ' || l.mode || coalesce(' on ' || l.relation::regclass::text, '') || CASE WHEN l.locktype = 'object' THEN ' on ' || l.classid::regclass::text || ' ' || l.objid ELSE '' END FROM pg_locks l WHERE l.pid = w.pid AND NOT l.granted LIMIT 1) AS lock,
                (SELECT string_agg(DISTINCT left(regexp_replace(b.query, '\\s+', ' ', 'g'), 90) || ' [' || b.state || ']', ' | ')
                   FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(w.pid))) AS blocker
         FROM pg_stat_activity w
         WHERE w.datname = current_database() AND w.wait_event_type = 'Lock' AND w.pid <> pg_backend_pid()`,
      );
      waits.samples += 1;
      for (const row of rows) {
        const key = `${statementHead(row.waiting)}\n      waits for ${row.lock ?? "?"} behind: ${row.blocker ?? "?"}`;
        waits.seen.set(key, (waits.seen.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, lockSampleIntervalMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop.catch(() => undefined);
      await client.end().catch(() => undefined);
      return waits;
    },
  };
}

async function runMode(
  database: { url: string; pid?: number },
  checkpointing: boolean,
  appProcesses: number,
  orderCount: number,
  withFloor: boolean,
): Promise<Figures> {
  const adminUrl = database.url;
  const mode = checkpointing ? "checkpointing" : "classic";
  const scratch = await scratchDatabase(adminUrl, "app");
  const databaseUrl = scratch.url;
  await migrate(databaseUrl);
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  await db.product.create({
    data: {
      sku: "BENCH-1",
      name: "Bench item",
      unitPrice: 1000,
      currency: "usd",
      stockOnHand: orderCount * 2,
    },
  });
  // A shop's `orders` is not empty, and its statistics are current (see seedEarlierOrders).
  await withAdmin(databaseUrl, (c) => seedEarlierOrders(c, earlierOrders));

  const logger = createLogger({ level: "warn" });
  const smtp = await startSmtpSink();
  const sandbox = createStripeSandbox({ webhookSecret, logger });
  const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;
  // Labels are bought from EasyPost's stand-in, as npm start does (tracker events are not sent:
  // the run's wait for delivery is not what is measured here).
  const easyPost = createEasyPostSandbox({ webhookSecret: easyPostWebhookSecret, logger });
  await easyPost.listen(0, "127.0.0.1");
  const profileDir = args["cpu-prof"] ? path.resolve(args["cpu-prof"]) : undefined;
  // One folder per process and run: tsx's loader thread writes a profile of its own beside the
  // main thread's (the larger file), and --cpu-prof-name cannot tell them apart.
  const profile = (name: string): string[] =>
    profileDir
      ? ["--cpu-prof", `--cpu-prof-dir=${path.join(profileDir, `${name}-${mode}-n${appProcesses}`)}`]
      : [];

  const children: Child[] = [];
  const poller = new Client({ connectionString: databaseUrl });
  poller.on("error", () => undefined);
  let figures: Figures;
  try {
    const ports: number[] = [];
    for (let i = 0; i < appProcesses; i++) ports.push(await freePort());
    const appUrls = ports.map((port) => `http://127.0.0.1:${port}`);
    const { engine, url: engineUrl } = await startEngine(
      databaseUrl,
      checkpointing,
      appUrls,
      profile("engine"),
      path.join(logDir, `engine-${mode}-n${appProcesses}-${orderCount}.log`),
    );
    children.push(engine);

    const apps = ports.map((port, i) => {
      const app = spawnNode(
        [...profile(`app${i}`), ...appCommand(args.memory)],
        {
          NODE_ENV: "test",
          LOG_LEVEL: "warn",
          PORT: String(port),
          HOST: "127.0.0.1",
          DATABASE_URL: databaseUrl,
          STRIPE_SECRET_KEY: "sk_test_bench",
          STRIPE_API_BASE: stripeUrl,
          STRIPE_WEBHOOK_SECRET: webhookSecret,
          INNGEST_DEV: engineUrl,
          SMTP_URL: smtp.url,
          ADMIN_API_TOKEN: "bench-admin-token-0123456789",
          PUBLIC_URL: "http://shop.test",
          EASYPOST_API_KEY: "EZTK_bench",
          EASYPOST_API_BASE: easyPost.apiBase ?? "",
          EASYPOST_WEBHOOK_SECRET: easyPostWebhookSecret,
          ...(args["statement-texts"] ? { BENCH_STATEMENT_TEXTS: "1" } : {}),
        },
        path.join(logDir, `app${i}-${mode}-n${appProcesses}-${orderCount}.log`),
      );
      children.push(app);
      return app;
    });
    // One after the other: each migrates the database at start (a no-op after the first).
    for (const [i, app] of apps.entries()) {
      const appUrl = appUrls[i] ?? "";
      for (let attempt = 0; ; attempt++) {
        const up = await fetch(`${appUrl}/healthz`).then(
          (res) => res.status < 500,
          () => false,
        );
        if (up) break;
        if (attempt > 600 || app.process.exitCode !== null)
          throw new Error(`the app did not start:\n${app.output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    // The engine syncs one address; with replicas it spreads the calls to it over all of them.
    await engine.ask({ type: "sync", url: `${appUrls[0]}/api/inngest` });

    const driverCpuMs = (): number => {
      const cpu = process.cpuUsage();
      return (cpu.user + cpu.system) / 1000;
    };
    const postgresCpuMs = (): number | undefined =>
      database.pid === undefined ? undefined : processTreeCpuMs(database.pid);

    const tablesBefore = await tableCounters(databaseUrl);
    const statementsBefore = await statementStats(databaseUrl);
    const engineBefore = await engine.ask({ type: "stats" });
    const appBefore = await statsOf(apps);
    const driverBefore = driverCpuMs();
    const postgresBefore = postgresCpuMs();
    const machineBefore = machineCpuMs();
    const loadBefore = loadAverage();
    const lockSampler = args["lock-samples"] ? sampleLockWaits(databaseUrl) : undefined;
    const started = performance.now();
    let checkoutRetries = 0;
    const webhookFailures: WebhookFailures = { redeliveries: 0, causes: new Map() };
    const memory: Figures["memory"] = [];
    let finished = false;
    let failure: Error | undefined;
    // Completion is watched while the checkouts go on, by the e-mails the SMTP sink received (an
    // order's review request is its last e-mail, sent in the step that completes it), and only then
    // in the database: a count of `orders` polled every few ms was itself a sequential scan of the
    // table each time, which the table counters below would have charged to the app.
    // Each look is one scan of the table; its own counters (pg_stat_xact_user_tables, exact inside
    // its transaction) are summed and taken off the table's figures below, so they are the app's
    // and the engine's alone.
    let databasePolls = 0;
    const driverReads: TableCounter = { seqScan: 0, seqTupRead: 0, idxScan: 0, idxTupFetch: 0 };
    await poller.connect();
    const countInDatabase = async () => {
      databasePolls += 1;
      const ownReads = async (): Promise<TableCounter> => {
        const { rows } = await poller.query<Record<string, string>>(
          `SELECT seq_scan, seq_tup_read, coalesce(idx_scan, 0) AS idx_scan,
                  coalesce(idx_tup_fetch, 0) AS idx_tup_fetch
           FROM pg_stat_xact_user_tables WHERE relid = 'public.orders'::regclass`,
        );
        const row = rows[0] ?? {};
        return {
          seqScan: Number(row.seq_scan ?? 0),
          seqTupRead: Number(row.seq_tup_read ?? 0),
          idxScan: Number(row.idx_scan ?? 0),
          idxTupFetch: Number(row.idx_tup_fetch ?? 0),
        };
      };
      await poller.query("BEGIN");
      try {
        const before = await ownReads();
        const { rows } = await poller.query<{ status: string; n: number }>(
          "SELECT status::text AS status, count(*)::int AS n FROM orders GROUP BY status",
        );
        const after = await ownReads();
        for (const key of Object.keys(driverReads) as (keyof TableCounter)[])
          driverReads[key] += after[key] - before[key];
        const of = (statuses: string[]) =>
          rows.filter((r) => statuses.includes(r.status)).reduce((sum, r) => sum + r.n, 0);
        return { completed: of(["completed"]) - earlierOrders, failed: of(["payment_failed", "cancelled"]) };
      } finally {
        await poller.query("COMMIT");
      }
    };
    const watch = (async () => {
      let nextSample = 1000;
      let lastDatabaseLook = performance.now();
      let lastMailed = 0;
      let lastProgress = performance.now();
      for (;;) {
        // Two e-mails an order: the tracking link, then the review request.
        const mailed = Math.floor(smtp.received() / 2);
        if (args.memory && mailed >= nextSample) {
          const answers = await Promise.all(apps.map((app) => app.ask({ type: "memory" })));
          memory.push({
            completed: mailed,
            heapMb: answers.reduce((sum, a) => sum + Number(a.heapUsedAfterGc), 0) / 2 ** 20,
            rssMb: answers.reduce((sum, a) => sum + Number(a.rss), 0) / 2 ** 20,
          });
          process.stdout.write(
            `  memory at ${mailed} orders: heap after GC ${memory.at(-1)?.heapMb.toFixed(1)} MB, RSS ${memory.at(-1)?.rssMb.toFixed(1)} MB\n`,
          );
          nextSample += 1000;
        }
        if ((performance.now() - started) / 1000 > clockLimitSeconds)
          throw new Error(
            `the run outlasted ${clockLimitSeconds.toFixed(0)} s: the engine's clock is past the year 9999, which PostgreSQL cannot read as the engine writes it`,
          );
        if (mailed !== lastMailed) {
          lastMailed = mailed;
          lastProgress = performance.now();
        } else if (performance.now() - lastProgress > stallAfterMs) {
          const { completed } = await countInDatabase();
          throw new Error(
            `no order progressed for ${stallAfterMs / 1000} s: ${completed} of ${orderCount} completed, ${mailed} reviews e-mailed (a stalled engine or app)`,
          );
        }
        if (mailed >= orderCount || performance.now() - lastDatabaseLook > 5000) {
          lastDatabaseLook = performance.now();
          const { completed, failed } = await countInDatabase();
          if (failed > 0) throw new Error(`${failed} orders failed during the benchmark`);
          if (completed === orderCount) break;
        }
        if (failure) break;
        await new Promise((resolve) => setTimeout(resolve, mailed >= orderCount ? 50 : 10));
      }
      finished = true;
    })();
    await pool(
      Array.from({ length: orderCount }, (_, i) => i),
      checkoutConcurrency,
      async (i) => {
        const appUrl = appUrls[i % appUrls.length] ?? "";
        // On a loaded machine the checkout transaction can outlast Prisma's timeouts: the app
        // answers 503 "retry with the same Idempotency-Key", or 409 "start a new one with a new
        // key" once that checkout gave up. The bench does as it says, as a client would.
        let res: Response;
        let key = 0;
        for (let attempt = 1; ; attempt++) {
          res = await fetch(`${appUrl}/api/checkout`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": `bench-checkout-${i}-${key}` },
            body: JSON.stringify({
              customerId: `cus_bench_${i}`,
              email: `buyer${i}@example.com`,
              items: [{ sku: "BENCH-1", quantity: 1 }],
            }),
          });
          if ((res.status !== 503 && res.status !== 409) || attempt >= 10) break;
          if (res.status === 409) key++;
          checkoutRetries++;
          await res.arrayBuffer();
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
        if (res.status !== 201)
          throw new Error(
            `checkout answered ${res.status}: ${await res.text()}\n${apps[i % apps.length]?.output.slice(-3000)}`,
          );
        const { checkoutSessionId } = (await res.json()) as { checkoutSessionId: string };
        // Delivered here rather than by the stand-in, so each order's webhook reaches the same
        // app process as its checkout (any would do: the service is stateless).
        const completed = await sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
          deliver: false,
        });
        await deliverWebhooks(
          sandbox,
          completed.events,
          appUrl,
          apps[i % apps.length] as Child,
          webhookFailures,
        );
      },
    ).catch((error: Error) => {
      failure = error;
    });
    await watch;
    if (failure) throw failure;
    if (!finished) throw new Error("the completion watch ended early");
    const seconds = (performance.now() - started) / 1000;
    const lockWaits = await lockSampler?.stop();
    const engineAfter = await engine.ask({ type: "stats" });
    const appAfter = await statsOf(apps);
    const driverAfter = driverCpuMs();
    const postgresAfter = postgresCpuMs();
    const machineAfter = machineCpuMs();
    const loadAfter = loadAverage();
    const tablesAfter = await tableCounters(databaseUrl);
    const statementsAfter = await statementStats(databaseUrl);
    const ordersAfter = tablesAfter.get("orders");
    if (ordersAfter)
      tablesAfter.set("orders", {
        seqScan: ordersAfter.seqScan - driverReads.seqScan,
        seqTupRead: ordersAfter.seqTupRead - driverReads.seqTupRead,
        idxScan: ordersAfter.idxScan - driverReads.idxScan,
        idxTupFetch: ordersAfter.idxTupFetch - driverReads.idxTupFetch,
      });
    const { otherRuns, shape, steps } = await withAdmin(databaseUrl, async (c) => {
      const others = await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM inngest_local.runs WHERE function_id NOT LIKE '%-fulfill-order'",
      );
      const steps = await c.query<{ op: string | null; name: string | null }>(
        `SELECT s.op, s.name FROM inngest_local.steps s
         WHERE s.run_id = (SELECT id FROM inngest_local.runs
                           WHERE function_id LIKE '%-fulfill-order' AND status = 'Completed'
                           ORDER BY started_at LIMIT 1)
         ORDER BY s.seq`,
      );
      return {
        otherRuns: others.rows[0]?.n ?? 0,
        shape: steps.rows.map(({ op }): Shape[number] =>
          /wait/i.test(op ?? "") ? "wait" : /sleep/i.test(op ?? "") ? "sleep" : "run",
        ),
        steps: steps.rows.map(({ op, name }, i): ShapeStep => ({
          op: /wait/i.test(op ?? "") ? "wait" : /sleep/i.test(op ?? "") ? "sleep" : "run",
          name: name ?? `step-${i + 1}`,
        })),
      };
    });

    figures = {
      mode,
      appProcesses,
      orders: orderCount,
      seconds,
      ordersPerSecond: orderCount / seconds,
      serveCalls: (stat(engineAfter, "calls") - stat(engineBefore, "calls")) / orderCount,
      checkpoints: (stat(engineAfter, "checkpoints") - stat(engineBefore, "checkpoints")) / orderCount,
      engineStatements: (stat(engineAfter, "statements") - stat(engineBefore, "statements")) / orderCount,
      appStatements: (appAfter.statements - appBefore.statements) / orderCount,
      appCpuMs: (appAfter.cpuMs - appBefore.cpuMs) / orderCount,
      engineCpuMs: (Number(engineAfter.cpuMs) - Number(engineBefore.cpuMs)) / orderCount,
      driverCpuMs: (driverAfter - driverBefore) / orderCount,
      postgresCpuMs:
        postgresBefore === undefined || postgresAfter === undefined
          ? undefined
          : (postgresAfter - postgresBefore) / orderCount,
      otherRuns,
      loadBefore,
      loadAfter,
      machineBusy:
        machineBefore && machineAfter
          ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
          : undefined,
      emails: smtp.received(),
      checkoutRetries,
      webhookFailures,
      engineStatementsByName: Object.entries(
        (engineAfter.stats as { statementsByName: Record<string, number> }).statementsByName,
      )
        .map(([name, count]): [string, number] => {
          const before = (engineBefore.stats as { statementsByName: Record<string, number> })
            .statementsByName[name];
          return [name, (count - (before ?? 0)) / orderCount];
        })
        .filter(([, perOrder]) => perOrder > 0)
        .sort((a, b) => b[1] - a[1]),
      appStatementsByText: Object.entries(appAfter.byText)
        .map(([text, n]): [string, number] => [text, (n - (appBefore.byText[text] ?? 0)) / orderCount])
        .filter(([, perOrder]) => perOrder > 0)
        .sort((a, b) => b[1] - a[1]),
      tables: tableCounterDelta(tablesBefore, tablesAfter, orderCount),
      ...(lockWaits ? { lockWaits } : {}),
      statements: statementsPerOrder(statementsBefore, statementsAfter, orderCount),
      shape,
      steps,
      memory,
      databasePolls,
      socketWrites: socketWritesPerUnit(
        appBefore.socketWrites,
        appAfter.socketWrites,
        peerNames({ databaseUrl, engineUrl, servedUrls: appUrls }, [
          { name: "Stripe", url: stripeUrl },
          ...(easyPost.apiBase ? [{ name: "EasyPost", url: easyPost.apiBase }] : []),
          { name: "SMTP", url: smtp.url },
        ]),
        orderCount,
      ),
    };
    await engine.ask({ type: "close" }).catch(() => undefined);
    if (profileDir) {
      // --cpu-prof writes its file only on a normal exit: let the apps shut down on SIGTERM.
      await Promise.all(
        apps.map((app) => {
          const exited = new Promise((resolve) => app.process.once("exit", resolve));
          app.process.kill("SIGTERM");
          return exited;
        }),
      );
    }
  } finally {
    await poller.end().catch(() => undefined);
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
    await db.$disconnect();
    await sandbox.close();
    await easyPost.close();
    await smtp.close();
    await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${scratch.name}" WITH (FORCE)`));
  }
  // Right after the app's run, in the same process set-up: the SDK's own cost for the same steps.
  if (withFloor)
    figures.floor = await runFloor(adminUrl, checkpointing, appProcesses, orderCount, figures.shape);
  // Then the I/O-matched floor: the same steps doing the app's Stripe, EasyPost, SMTP and SQL.
  if (withFloor)
    figures.ioFloor = await runIoFloor(
      database,
      checkpointing,
      appProcesses,
      orderCount,
      figures.steps,
      Math.round(figures.appStatements),
    );
  return figures;
}

/** What an order and an idle month cost in Inngest executions (a run, or one step: Inngest bills both). */
interface ExecutionFigures {
  orders: number;
  /** Per production order: fulfil-order runs, their steps (runs, sleeps, waits, sends), events sent. */
  runs: number;
  steps: number;
  events: number;
  eventNames: string[];
  /** Executions of each order, smallest first. */
  perOrder: number[];
  /** One completed fulfil-order run's step names, in order. */
  stepNames: string[];
  burst?: BurstFigures;
  /** Per cron function: fires in 30 days as configured, steps of an idle run, executions a month. */
  idle: { functionId: string; cron: string; firesPerMonth: number; idleSteps: number; executions: number }[];
}

/** The burst: signed first deliveries, 50 in flight, then every order fulfilled. */
interface BurstFigures {
  deliveries: number;
  inFlight: number;
  ackAllSeconds: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  fulfilledSeconds: number;
  labels: number;
  captures: number;
  /** Messages the SMTP sink took meanwhile, and tracking e-mails recorded sent, for the burst's orders. */
  emails: number;
  trackingMails: number;
  /** Orders a cron's sweep announced before their delivery arrived. */
  announcedEarly: number;
  /** Parcels recorded for the burst's orders (one label each). */
  parcels: number;
  announced: number;
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);

/** A cron's fires in 30 days, from a Monday midnight UTC (every cron's pattern repeats within it). */
function firesIn30Days(source: string): number {
  const cron = parseCron(source);
  const start = Date.UTC(2027, 0, 4);
  const end = start + 30 * 86_400_000;
  let fires = 0;
  for (let at = cron.nextAfter(start); at !== undefined && at <= end; at = cron.nextAfter(at)) fires++;
  return fires;
}

/**
 * The executions phase: one app process (checkpointing) in the production configuration
 * (FULFILMENT_HOLD=30m, the carrier's `tracker.updated` webhook delivering each parcel, the review
 * request after it), on a fresh empty database. First, with no order at all, every cron fires a few
 * times: the steps of its last run are what an idle run costs, times its fires in 30 days as
 * configured. Then `count` orders, one at a time: their runs, steps and events, read from the
 * engine's tables.
 */
async function runExecutionsPhase(adminUrl: string, count: number): Promise<ExecutionFigures> {
  const scratch = await scratchDatabase(adminUrl, "executions");
  const databaseUrl = scratch.url;
  await migrate(databaseUrl);
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  await db.product.create({
    data: { sku: "BENCH-1", name: "Bench item", unitPrice: 1000, currency: "usd", stockOnHand: 100 },
  });
  const logger = createLogger({ level: "warn" });
  const smtp = await startSmtpSink();
  const sandbox = createStripeSandbox({ webhookSecret, logger });
  const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;
  const port = await freePort();
  const appUrl = `http://127.0.0.1:${port}`;
  const easyPost = createEasyPostSandbox({
    webhookSecret: easyPostWebhookSecret,
    logger,
    webhookUrl: `${appUrl}/api/carrier/webhook`,
  });
  await easyPost.listen(0, "127.0.0.1");
  const children: Child[] = [];
  try {
    // Crons at most every 300 real ms: each fires a few times in the idle wait below.
    const { engine, url: engineUrl } = await startEngine(
      databaseUrl,
      true,
      [appUrl],
      [],
      path.join(logDir, "engine-executions.log"),
      300,
    );
    children.push(engine);
    const app = spawnNode(
      appCommand(false),
      {
        NODE_ENV: "test",
        LOG_LEVEL: "warn",
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: databaseUrl,
        STRIPE_SECRET_KEY: "sk_test_bench",
        STRIPE_API_BASE: stripeUrl,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        INNGEST_DEV: engineUrl,
        SMTP_URL: smtp.url,
        ADMIN_API_TOKEN: "bench-admin-token-0123456789",
        PUBLIC_URL: "http://shop.test",
        EASYPOST_API_KEY: "EZTK_bench",
        EASYPOST_API_BASE: easyPost.apiBase ?? "",
        EASYPOST_WEBHOOK_SECRET: easyPostWebhookSecret,
        // Production's default (src/config.ts), which NODE_ENV=test turns off.
        FULFILMENT_HOLD: "30m",
        // The wait for delivery lasts 30 real seconds on the engine's clock (14 days: 0.12 s), so
        // the carrier's webhook reaches it on a loaded machine; the step count is the same.
        REVIEW_DELAY: "3650d",
      },
      path.join(logDir, "app-executions.log"),
    );
    children.push(app);
    for (let attempt = 0; ; attempt++) {
      const up = await fetch(`${appUrl}/healthz`).then(
        (res) => res.status < 500,
        () => false,
      );
      if (up) break;
      if (attempt > 600 || app.process.exitCode !== null)
        throw new Error(`the app did not start:\n${app.output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await engine.ask({ type: "sync", url: `${appUrl}/api/inngest` });

    const query = <R extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
      withAdmin(databaseUrl, async (c) => (await c.query<R>(text, values)).rows);
    const functions = await query<{ id: string; config: { triggers?: { cron?: string }[] } }>(
      "SELECT id, config FROM inngest_local.functions ORDER BY id",
    );
    const crons = functions.flatMap((fn) =>
      (fn.config.triggers ?? []).flatMap((t) => (t.cron ? [{ functionId: fn.id, cron: t.cron }] : [])),
    );
    // Idle: every cron completes at least three runs (the first of some does a day's work once).
    for (let waited = 0; ; waited += 200) {
      const done = await query<{ function_id: string; n: number }>(
        `SELECT function_id, count(*)::int AS n FROM inngest_local.runs
         WHERE status = 'Completed' AND event->>'name' = 'inngest/scheduled.timer' GROUP BY function_id`,
      );
      const runsOf = new Map(done.map((row) => [row.function_id, row.n]));
      if (crons.every((c) => (runsOf.get(c.functionId) ?? 0) >= 3)) break;
      if (waited > 120_000) throw new Error(`crons did not run: ${JSON.stringify(done)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const idle = [];
    for (const { functionId, cron } of crons) {
      const [last] = await query<{ steps: number }>(
        `SELECT (SELECT count(*)::int FROM inngest_local.steps s WHERE s.run_id = r.id) AS steps
         FROM inngest_local.runs r
         WHERE r.function_id = $1 AND r.status = 'Completed' AND r.event->>'name' = 'inngest/scheduled.timer'
         ORDER BY r.started_at DESC LIMIT 1`,
        [functionId],
      );
      const idleSteps = last?.steps ?? 0;
      const firesPerMonth = firesIn30Days(cron);
      idle.push({ functionId, cron, firesPerMonth, idleSteps, executions: firesPerMonth * (1 + idleSteps) });
    }

    // Production orders, one at a time: checkout, paid, booked, delivered by the carrier, reviewed.
    const [{ seq: eventsBefore } = { seq: "0" }] = await query<{ seq: string }>(
      "SELECT coalesce(max(seq), 0)::text AS seq FROM inngest_local.events",
    );
    const orderIds: string[] = [];
    const failures: WebhookFailures = { redeliveries: 0, causes: new Map() };
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${appUrl}/api/checkout`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `bench-production-${i}` },
        body: JSON.stringify({
          customerId: `cus_production_${i}`,
          email: `production${i}@example.com`,
          items: [{ sku: "BENCH-1", quantity: 1 }],
        }),
      });
      if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${await res.text()}`);
      const { orderId, checkoutSessionId } = (await res.json()) as {
        orderId: string;
        checkoutSessionId: string;
      };
      orderIds.push(orderId);
      const completed = await sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
        deliver: false,
      });
      await deliverWebhooks(sandbox, completed.events, appUrl, app, failures);
      const waitFor = async <T>(what: string, look: () => Promise<T | undefined>): Promise<T> => {
        for (let waited = 0; waited < 120_000; waited += 50) {
          const found = await look();
          if (found !== undefined) return found;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`order ${orderId}: ${what} did not happen in 120 s`);
      };
      const trackingCode = await waitFor("the label", async () => {
        const parcel = await db.shipment.findFirst({ where: { orderId }, select: { trackingNumber: true } });
        return parcel?.trackingNumber ?? undefined;
      });
      // Delivered once the run waits for it, as a parcel days on the road is (an event before the
      // wait starts is not seen by it, and the review would then come from the wait's timeout).
      await waitFor("the wait for delivery", async () => {
        const [waiting] = await query<{ n: number }>(
          `SELECT count(*)::int AS n FROM inngest_local.jobs j JOIN inngest_local.runs r ON r.id = j.run_id
           WHERE j.kind = 'wait' AND r.event->'data'->>'orderId' = $1 AND j.event_name = 'shop/shipment.delivered'`,
          [orderId],
        );
        return (waiting?.n ?? 0) > 0 ? true : undefined;
      });
      await easyPost.advanceTracker(trackingCode, "delivered");
      await waitFor("completion", async () => {
        const order = await db.order.findUnique({ where: { id: orderId }, select: { status: true } });
        return order?.status === "completed" ? true : undefined;
      });
    }
    const perOrder = await query<{ n: number }>(
      `SELECT (count(DISTINCT r.id) + count(s.id))::int AS n
       FROM inngest_local.runs r LEFT JOIN inngest_local.steps s ON s.run_id = r.id
       WHERE r.event->>'name' <> 'inngest/scheduled.timer' AND r.event->'data'->>'orderId' = ANY($1::text[])
       GROUP BY r.event->'data'->>'orderId' ORDER BY 1`,
      [orderIds],
    );
    const [orderRuns] = await query<{ runs: number; steps: number }>(
      `SELECT count(*)::int AS runs,
              coalesce(sum((SELECT count(*) FROM inngest_local.steps s WHERE s.run_id = r.id)), 0)::int AS steps
       FROM inngest_local.runs r
       WHERE r.event->>'name' <> 'inngest/scheduled.timer' AND r.event->'data'->>'orderId' = ANY($1::text[])`,
      [orderIds],
    );
    const sentByName = await query<{ name: string; n: number }>(
      `SELECT name, count(*)::int AS n FROM inngest_local.events
       WHERE seq > $1::bigint AND name NOT LIKE 'inngest/%' GROUP BY name ORDER BY name`,
      [eventsBefore],
    );
    const names = await query<{ name: string | null }>(
      `SELECT s.name FROM inngest_local.steps s
       WHERE s.run_id = (SELECT id FROM inngest_local.runs WHERE function_id LIKE '%-fulfill-order'
                         AND status = 'Completed' AND event->'data'->>'orderId' = $1 LIMIT 1)
       ORDER BY s.seq`,
      [orderIds[0] ?? ""],
    );
    // The burst: `burstSize` orders checked out and paid beforehand (their webhooks kept back), then
    // every first delivery at once, 50 in flight: how long until all are acknowledged, and until
    // all are fulfilled; then the exactly-once counts, from the stand-ins and the database.
    let burst: BurstFigures | undefined;
    if (burstSize > 0) {
      const inFlight = 50;
      const prepared: { orderId: string; eventId: string; paymentIntentId: string }[] = [];
      await pool(
        Array.from({ length: burstSize }, (_, i) => i),
        checkoutConcurrency,
        async (i) => {
          const res = await fetch(`${appUrl}/api/checkout`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": `bench-burst-${i}` },
            body: JSON.stringify({
              customerId: `cus_burst_${i}`,
              email: `burst${i}@example.com`,
              items: [{ sku: "BENCH-1", quantity: 1 }],
            }),
          });
          if (res.status !== 201)
            throw new Error(`burst checkout answered ${res.status}: ${await res.text()}`);
          const { orderId, checkoutSessionId } = (await res.json()) as {
            orderId: string;
            checkoutSessionId: string;
          };
          const completed = await sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
            deliver: false,
          });
          const first = completed.events.find((event) => event.type === "checkout.session.completed");
          const paymentIntentId = completed.paymentIntent?.id;
          if (!first || !paymentIntentId) throw new Error(`order ${orderId}: no checkout.session.completed`);
          prepared.push({ orderId, eventId: first.id, paymentIntentId });
        },
      );
      const mailsBefore = smtp.received();
      // The phase's crons fire every 300 real ms: sweep-missed-webhooks may find a prepared order's
      // event at the Stripe stand-in before its delivery does (the delivery is then a duplicate).
      const [early] = await query<{ n: number }>(
        "SELECT count(*)::int AS n FROM orders WHERE id = ANY($1::uuid[]) AND placed_event_sent_at IS NOT NULL",
        [prepared.map((p) => p.orderId)],
      );
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      const started = performance.now();
      await pool(prepared, inFlight, async ({ eventId }) => {
        const { payload, header } = sandbox.signedDelivery(eventId);
        const sent = performance.now();
        const res = await fetch(`${appUrl}/api/stripe/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": header },
          body: payload,
        });
        await res.arrayBuffer();
        latencies.push(performance.now() - sent);
        statuses[String(res.status)] = (statuses[String(res.status)] ?? 0) + 1;
      });
      const ackAllSeconds = (performance.now() - started) / 1000;
      const burstIds = prepared.map((p) => p.orderId);
      for (let waited = 0; ; waited += 100) {
        // Fulfilled: the label bought, the money captured, the tracking e-mail recorded sent (the
        // last of the three); its delivery and review come days later.
        const [done] = await query<{ n: number }>(
          `SELECT count(*)::int AS n FROM email_messages
           WHERE order_id = ANY($1::uuid[]) AND template = 'shipped' AND status = 'sent'`,
          [burstIds],
        );
        if ((done?.n ?? 0) >= burstIds.length) break;
        if (waited > 600_000) throw new Error(`the burst's orders did not all complete: ${done?.n ?? 0}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const fulfilledSeconds = (performance.now() - started) / 1000;
      const [announced] = await query<{ n: number }>(
        "SELECT count(*)::int AS n FROM orders WHERE id = ANY($1::uuid[]) AND placed_event_sent_at IS NOT NULL",
        [burstIds],
      );
      const [trackingMails] = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM email_messages
         WHERE order_id = ANY($1::uuid[]) AND template = 'shipped' AND status = 'sent'`,
        [burstIds],
      );
      const [parcels] = await query<{ n: number }>(
        "SELECT count(*)::int AS n FROM shipments WHERE order_id = ANY($1::uuid[])",
        [burstIds],
      );
      const sorted = [...latencies].sort((a, b) => a - b);
      burst = {
        deliveries: prepared.length,
        inFlight,
        ackAllSeconds,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        statuses,
        fulfilledSeconds,
        // Per order, as the crash e2e test counts them: exactly one each.
        labels: prepared.filter(
          ({ orderId }) =>
            easyPost.purchased().filter((x) => x.reference === `order-${orderId}`).length === 1,
        ).length,
        captures: prepared.filter(
          ({ paymentIntentId }) =>
            sandbox.requests.filter(
              (r) =>
                r.endpoint === "payment_intents.capture" &&
                r.status < 300 &&
                !r.replayed &&
                r.path.includes(paymentIntentId),
            ).length === 1,
        ).length,
        announcedEarly: early?.n ?? 0,
        emails: smtp.received() - mailsBefore,
        trackingMails: trackingMails?.n ?? 0,
        parcels: parcels?.n ?? 0,
        announced: announced?.n ?? 0,
      };
    }
    await engine.ask({ type: "close" }).catch(() => undefined);
    return {
      burst,
      orders: count,
      runs: (orderRuns?.runs ?? 0) / count,
      steps: (orderRuns?.steps ?? 0) / count,
      events: sentByName.reduce((sum, row) => sum + row.n, 0) / count,
      eventNames: sentByName.map((row) => `${row.name} ${(row.n / count).toFixed(1)}`),
      stepNames: names.map((row) => row.name ?? "?"),
      perOrder: perOrder.map((row) => row.n),
      idle,
    };
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
    await db.$disconnect();
    await sandbox.close();
    await easyPost.close();
    await smtp.close();
    await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${scratch.name}" WITH (FORCE)`));
  }
}

/** Tables whose counters are printed whether or not they moved: the order's and the engine's. */
const mainTables = [
  "orders",
  "order_lines",
  "payments",
  "shipments",
  "email_messages",
  "order_timeline",
  "products",
  "stock_holds",
  "stock_reservations",
  "stock_movements",
  "inngest_local.runs",
  "inngest_local.steps",
  "inngest_local.jobs",
  "inngest_local.events",
];

async function main(): Promise<void> {
  if (!args.tsx && !args["no-build"]) {
    process.stdout.write("npm run build (the app runs dist/, as production does)...\n");
    execFileSync("npm", ["run", "build", "--silent"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  }
  process.stdout.write(`app logs: ${logDir}\n`);
  const databaseServer = await benchDatabaseServer(args["database-url"]);
  stopDatabaseServer = databaseServer.stop;
  const runs: Figures[] = [];
  const executions =
    productionOrders > 0 && !args.memory
      ? await runExecutionsPhase(databaseServer.url, productionOrders)
      : undefined;
  if (executions)
    process.stdout.write(`  ran the executions phase: ${executions.orders} production orders\n`);
  for (const mode of modes)
    for (const appProcesses of appProcessCounts)
      for (const [i, size] of sizes.entries()) {
        const figures = await runMode(
          databaseServer,
          mode === "checkpointing",
          appProcesses,
          size,
          i === 0 && !args.memory,
        );
        process.stdout.write(
          `  ran ${mode}, ${appProcesses} app process(es), ${size} orders: ${figures.seconds.toFixed(1)} s` +
            (figures.floor ? `, floor ${figures.floor.seconds.toFixed(1)} s` : "") +
            "\n",
        );
        runs.push(figures);
      }
  const row = (label: string, value: (f: Figures) => string) =>
    `${label.padEnd(44)}${runs.map((f) => value(f).padStart(18)).join("")}`;
  const perOrder = (value: number | undefined) => (value === undefined ? "n/a" : value.toFixed(1));
  const floorValue = (f: Figures, value: (floor: FloorFigures) => string) => (f.floor ? value(f.floor) : "-");
  const ioFloorValue = (f: Figures, value: (floor: FloorFigures) => string) =>
    f.ioFloor ? value(f.ioFloor) : "-";
  const cores = coreCount();
  const lines = [
    `app: ${args.tsx ? "src/server.ts through tsx (--tsx)" : "dist/server.js (compiled, as production runs it)"}; ${cores} cores; ${checkoutConcurrency} checkouts at a time, one customer each; crons at most once per ${cronIntervalMs} real ms; engine clock x${engineTimeScale.toExponential(0)}`,
    row("", (f) => f.mode),
    row("app processes", (f) => String(f.appProcesses)),
    row("orders", (f) => String(f.orders)),
    row("all orders completed (s)", (f) => f.seconds.toFixed(2)),
    row("orders/s", (f) => f.ordersPerSecond.toFixed(1)),
    row("serve() calls / order", (f) => f.serveCalls.toFixed(1)),
    row("checkpoint POSTs / order", (f) => f.checkpoints.toFixed(1)),
    row("SQL statements / order: app", (f) => f.appStatements.toFixed(1)),
    row("SQL statements / order: engine", (f) => f.engineStatements.toFixed(1)),
    row("CPU ms / order: app", (f) => f.appCpuMs.toFixed(1)),
    row("CPU ms / order: engine", (f) => f.engineCpuMs.toFixed(1)),
    row("CPU ms / order: app + engine", (f) => (f.appCpuMs + f.engineCpuMs).toFixed(1)),
    row("CPU ms / order: PostgreSQL", (f) => perOrder(f.postgresCpuMs)),
    row("CPU ms / order: driver + stand-ins", (f) => f.driverCpuMs.toFixed(1)),
    row("floor: steps (ops) per run", (f) => floorValue(f, () => String(f.shape.length))),
    row("floor: serve() calls / checkpoints per run", (f) =>
      floorValue(f, (fl) => `${fl.serveCalls.toFixed(1)} / ${fl.checkpoints.toFixed(1)}`),
    ),
    row("floor: SQL statements / run", (f) => floorValue(f, (fl) => fl.statements.toFixed(1))),
    row("floor: CPU ms / run: floor app", (f) => floorValue(f, (fl) => fl.cpuMs.toFixed(1))),
    row("floor: CPU ms / run: engine", (f) => floorValue(f, (fl) => fl.engineCpuMs.toFixed(1))),
    row("app / floor CPU per order", (f) => floorValue(f, (fl) => (f.appCpuMs / fl.cpuMs).toFixed(2))),
    row("I/O floor: SQL statements / order", (f) => ioFloorValue(f, (fl) => fl.statements.toFixed(1))),
    row("I/O floor: CPU ms / order: floor app", (f) => ioFloorValue(f, (fl) => fl.cpuMs.toFixed(1))),
    row("I/O floor: CPU ms / order: engine", (f) => ioFloorValue(f, (fl) => fl.engineCpuMs.toFixed(1))),
    row("I/O floor: CPU ms / order: PostgreSQL", (f) => ioFloorValue(f, (fl) => perOrder(fl.postgresCpuMs))),
    row("I/O floor: socket writes / order", (f) =>
      ioFloorValue(f, (fl) =>
        fl.socketWrites.map(([peer, n]) => `${peer.split(" ")[0]} ${n.toFixed(1)}`).join(", "),
      ),
    ),
    row("app / I/O floor CPU per order", (f) => ioFloorValue(f, (fl) => (f.appCpuMs / fl.cpuMs).toFixed(2))),
    row("stack / I/O floor CPU per order", (f) => ioFloorValue(f, (fl) => stackIoRatio(f, fl))),
    "socket writes (one hand-over to the kernel each) per order, app / floor, by peer:",
    ...peerOrder
      .filter((name) => runs.some((f) => f.socketWrites.some(([peer]) => peer === name)))
      .map((name) =>
        row(`  ${name}`, (f) => {
          const of = (writes: PeerWrites | undefined) => writes?.find(([peer]) => peer === name)?.[1];
          const floor = of(f.floor?.socketWrites);
          return `${(of(f.socketWrites) ?? 0).toFixed(1)} / ${f.floor ? (floor ?? 0).toFixed(1) : "-"}`;
        }),
      ),
    row(
      "  all peers",
      (f) =>
        `${totalWrites(f.socketWrites).toFixed(1)} / ${f.floor ? totalWrites(f.floor.socketWrites).toFixed(1) : "-"}`,
    ),
    row("app / floor socket writes per order", (f) =>
      floorValue(f, (fl) => (totalWrites(f.socketWrites) / totalWrites(fl.socketWrites)).toFixed(2)),
    ),
    row(
      "CPU ms per socket write, app / floor",
      (f) =>
        `${(f.appCpuMs / totalWrites(f.socketWrites)).toFixed(3)} / ${floorValue(f, (fl) => (fl.cpuMs / totalWrites(fl.socketWrites)).toFixed(3))}`,
    ),
    row("other runs (crons etc.) during the run", (f) => String(f.otherRuns)),
    row("load average (1 min) start / end", (f) => `${f.loadBefore.toFixed(1)} / ${f.loadAfter.toFixed(1)}`),
    row(`machine busy (all processes, ${cores} cores)`, (f) =>
      f.machineBusy === undefined ? "n/a" : `${(f.machineBusy * 100).toFixed(0)} %`,
    ),
    row("our share of the machine's CPU", (f) => {
      const ours = (f.appCpuMs + f.engineCpuMs + f.driverCpuMs + (f.postgresCpuMs ?? 0)) * f.orders;
      return `${((ours / (f.seconds * 1000 * cores)) * 100).toFixed(0)} %`;
    }),
    row("e-mails sent", (f) => String(f.emails)),
    row("checkouts retried (503 busy, 409)", (f) => String(f.checkoutRetries)),
    row("webhooks redelivered after a 5xx", (f) => String(f.webhookFailures.redeliveries)),
    row("the driver's own scans of orders (taken off below)", (f) => String(f.databasePolls)),
    "tables, per order: sequential scans / rows read by them / rows fetched by index (pg_stat_user_tables)",
  ];
  const tableNames = [
    ...mainTables,
    ...[...new Set(runs.flatMap((f) => [...f.tables.keys()]))]
      .filter((name) => !mainTables.includes(name))
      .sort(),
  ];
  for (const name of tableNames) {
    lines.push(
      row(`  ${name}`, (f) => {
        const t = f.tables.get(name);
        return t
          ? `${t.seqScan.toFixed(2)} / ${t.seqTupRead.toFixed(0)} / ${t.idxTupFetch.toFixed(0)}`
          : "0 / 0 / 0";
      }),
    );
  }
  lines.push(
    row("  all tables: rows read (seq + index)", (f) =>
      [...f.tables.values()].reduce((sum, t) => sum + t.seqTupRead + t.idxTupFetch, 0).toFixed(0),
    ),
  );
  lines.push("engine SQL statements / order, by statement:");
  for (const f of runs)
    lines.push(
      `  ${f.mode}, ${f.appProcesses} app process${f.appProcesses > 1 ? "es" : ""}, ${f.orders} orders: ${f.engineStatementsByName
        .map(([name, n]) => `${name} ${n.toFixed(2)}`)
        .join(", ")}`,
    );
  lines.push(
    "PostgreSQL per order by statement (pg_stat_statements, track=all; the app's, the engine's and the driver's share a database): " +
      "calls, plans (0: a cached generic plan), mean execution and planning ms per call, execution and planning ms per order, " +
      "shared blocks touched and rows per order; nested (run by a trigger or function) lines are inside their caller's time",
  );
  for (const f of runs) {
    const what = `${f.mode}, ${f.appProcesses} app process(es), ${f.orders} orders`;
    if (f.statements.length === 0) {
      lines.push(`  ${what}: pg_stat_statements not loaded`);
      continue;
    }
    // --statement-texts: every statement down to the smallest (the nested fan-out and trigger lines).
    lines.push(...statementLines(`app ${what}`, f.statements, args["statement-texts"] ? 80 : 25));
    if (f.ioFloor?.byStatement?.length)
      lines.push(...statementLines(`I/O floor beside it (${what})`, f.ioFloor.byStatement, 5));
  }
  for (const f of runs) {
    if (!f.lockWaits) continue;
    const { samples, intervalMs, seen } = f.lockWaits;
    lines.push(
      `lock waits (${f.mode}, ${f.appProcesses} app process(es), ${f.orders} orders; --lock-samples: ${samples} samples, one every ${intervalMs} ms + the look's own time): ` +
        "backends seen waiting, by statement, lock and what blocks it; ms per order estimated as samples x interval / orders",
    );
    if (seen.size === 0) lines.push("  none seen");
    for (const [key, n] of [...seen].sort((a, b) => b[1] - a[1]).slice(0, 12))
      lines.push(
        `  ${String(n).padStart(6)} samples, ~${((n * intervalMs) / f.orders).toFixed(2)} ms/order  ${key}`,
      );
  }
  if (args["statement-texts"]) {
    lines.push("app SQL statements / order, by text:");
    for (const f of runs) {
      lines.push(`  ${f.mode}, ${f.appProcesses} app process(es), ${f.orders} orders:`);
      for (const [text, n] of f.appStatementsByText) lines.push(`    ${n.toFixed(2).padStart(6)}  ${text}`);
    }
  }
  for (const f of runs)
    for (const [cause, n] of f.webhookFailures.causes)
      lines.push(
        `webhook 5xx (${f.mode}, ${f.appProcesses} app process(es), ${f.orders} orders) x${n}: ${cause}`,
      );
  if (args.memory) {
    lines.push("app memory after a full GC (heap used) and RSS, MB, by orders completed:");
    for (const f of runs)
      for (const sample of f.memory)
        lines.push(
          `  ${String(sample.completed).padStart(6)} orders: heap ${sample.heapMb.toFixed(1)}, RSS ${sample.rssMb.toFixed(1)}`,
        );
  }
  if (executions) {
    const perOrder = executions.runs + executions.steps;
    lines.push(
      `executions per production order (FULFILMENT_HOLD=30m, delivered by the carrier's webhook, reviewed 3 days after; ${executions.orders} orders): ${executions.runs.toFixed(1)} runs + ${executions.steps.toFixed(1)} steps = ${perOrder.toFixed(1)} (events sent per order: ${executions.events.toFixed(1)}; goal <= 9)`,
      `  fulfil-order's steps: ${executions.stepNames.join(", ")}; each order's executions: ${executions.perOrder.join(", ")}`,
      `  events per order: ${executions.eventNames.join(", ")}`,
      "idle executions a month (30 days, no orders), per cron as configured: fires x (1 run + steps of an idle run)",
    );
    for (const cron of executions.idle)
      lines.push(
        `  ${cron.functionId.padEnd(40)} ${cron.cron.padEnd(14)} ${String(cron.firesPerMonth).padStart(6)} x (1 + ${cron.idleSteps}) = ${String(cron.executions).padStart(7)}`,
      );
    // reconcile-daily's first run of a shop day reconciles it: one step more, once a day.
    const dailyReconcile = executions.idle.some((cron) => cron.functionId.endsWith("-reconcile-daily"))
      ? 30
      : 0;
    if (dailyReconcile > 0)
      lines.push(
        `  ${"reconcile-daily's reconcile-day, once a day".padEnd(62)} 30 x 1 = ${String(dailyReconcile).padStart(7)}`,
      );
    const idleTotal = executions.idle.reduce((sum, cron) => sum + cron.executions, 0) + dailyReconcile;
    lines.push(`idle-executions-a-month: ${idleTotal} (goal <= 5000)`);
    const burst = executions.burst;
    if (burst) {
      const exact =
        burst.labels === burst.deliveries &&
        burst.parcels === burst.deliveries &&
        burst.captures === burst.deliveries &&
        burst.emails >= burst.deliveries - burst.announcedEarly &&
        burst.trackingMails === burst.deliveries &&
        burst.announced === burst.deliveries;
      lines.push(
        `burst: ${burst.deliveries} signed first deliveries, ${burst.inFlight} in flight (one app process, checkpointing, FULFILMENT_HOLD=30m): ` +
          `all acknowledged in ${burst.ackAllSeconds.toFixed(1)} s, p50 ${burst.p50Ms.toFixed(1)} ms, p99 ${burst.p99Ms.toFixed(1)} ms, answers ${JSON.stringify(burst.statuses)}; ` +
          `all fulfilled (label, capture, tracking e-mail) in ${burst.fulfilledSeconds.toFixed(1)} s; exactly once ${exact ? "held" : "BROKEN"}: ` +
          `${burst.announced} announced, ${burst.labels} labels bought (${burst.parcels} parcels recorded), ${burst.captures} captures, ${burst.trackingMails} tracking e-mails recorded sent, ${burst.emails} messages at the SMTP sink during the burst (orders with exactly one label and one capture counted; ${burst.announcedEarly} announced by the missed-webhook sweep before their delivery)`,
      );
    }
    lines.push(`executions-per-production-order: ${perOrder.toFixed(1)} (goal <= 9)`);
  }
  // One ratio per mode and process count (the first size's runs), the default mode's last.
  const withFloor = runs.filter((f) => f.floor);
  const ordered = [
    ...withFloor.filter((f) => !(f.mode === "checkpointing" && f.appProcesses === 1)),
    ...withFloor.filter((f) => f.mode === "checkpointing" && f.appProcesses === 1),
  ];
  for (const f of ordered) {
    const io = f.ioFloor;
    const what = `${f.mode}, ${f.appProcesses} app process${f.appProcesses > 1 ? "es" : ""}, ${f.orders} orders`;
    if (io)
      lines.push(
        `app-io-floor-ratio: ${(f.appCpuMs / io.cpuMs).toFixed(2)} (${what}: app ${f.appCpuMs.toFixed(1)} ms / I/O floor ${io.cpuMs.toFixed(1)} ms CPU per order)`,
        `stack-io-floor-ratio: ${stackIoRatio(f, io)} (${what}: app + engine + PostgreSQL ${stackCpu(f.appCpuMs, f.engineCpuMs, f.postgresCpuMs)} ms / I/O floor's ${stackCpu(io.cpuMs, io.engineCpuMs, io.postgresCpuMs)} ms CPU per order)`,
      );
    lines.push(
      `app-floor-ratio: ${(f.appCpuMs / (f.floor as FloorFigures).cpuMs).toFixed(2)} (${f.mode}, ${f.appProcesses} app process${f.appProcesses > 1 ? "es" : ""}, ${f.orders} orders: app ${f.appCpuMs.toFixed(1)} ms / floor ${(f.floor as FloorFigures).cpuMs.toFixed(1)} ms CPU per order)`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** Whose a statement is: the engine's touch its schema; the rest are the app's (and a few of the driver's). */
const isEngineStatement = (st: StatementFigures) => st.query.includes("inngest_local");

/** One database's statements per order: totals (top level), by whom, then the `top` largest. */
function statementLines(title: string, statements: StatementFigures[], top: number): string[] {
  const sum = (list: StatementFigures[]) =>
    list.reduce(
      (acc, st) => ({
        calls: acc.calls + st.calls,
        plans: acc.plans + st.plans,
        exec: acc.exec + st.execMs,
        plan: acc.plan + st.planMs,
        blocks: acc.blocks + st.blocks,
      }),
      { calls: 0, plans: 0, exec: 0, plan: 0, blocks: 0 },
    );
  const totalLine = (who: string, list: StatementFigures[]) => {
    const t = sum(list);
    return `    ${who}: ${t.calls.toFixed(1)} statements, ${t.plans.toFixed(1)} plans, ${t.exec.toFixed(2)} ms execution + ${t.plan.toFixed(2)} ms planning, ${t.blocks.toFixed(0)} blocks per order`;
  };
  const topLevel = statements.filter((st) => st.toplevel);
  const nested = statements.filter((st) => !st.toplevel);
  const lines = [
    `  ${title}:`,
    totalLine("all, top level", topLevel),
    totalLine(
      "app (and driver), top level",
      topLevel.filter((st) => !isEngineStatement(st)),
    ),
    totalLine("engine, top level", topLevel.filter(isEngineStatement)),
    totalLine("nested (triggers, functions; inside the above)", nested),
    `    ${"calls".padStart(6)} ${"plans".padStart(6)} ${"exec/c".padStart(7)} ${"plan/c".padStart(7)} ${"exec".padStart(7)} ${"plan".padStart(7)} ${"blocks".padStart(7)} ${"rows".padStart(6)}`,
  ];
  for (const st of statements.slice(0, top)) {
    const mean = (ms: number, n: number) => (n > 0 ? (ms / n).toFixed(3) : "-").padStart(7);
    lines.push(
      `    ${st.calls.toFixed(2).padStart(6)} ${st.plans.toFixed(2).padStart(6)} ${mean(st.execMs, st.calls)} ${mean(st.planMs, st.plans)} ${st.execMs.toFixed(3).padStart(7)} ${st.planMs.toFixed(3).padStart(7)} ${st.blocks.toFixed(1).padStart(7)} ${st.rows.toFixed(1).padStart(6)}  ${st.toplevel ? "" : "(nested) "}${isEngineStatement(st) ? "[engine] " : ""}${st.query}`,
    );
  }
  return lines;
}

/** App (or floor) + engine + PostgreSQL CPU per order, ms; "n/a" without PostgreSQL's (--database-url). */
function stackCpu(app: number, engine: number, postgres: number | undefined): string {
  return postgres === undefined ? "n/a" : (app + engine + postgres).toFixed(1);
}

/** (app + engine + PostgreSQL) / the same for the I/O floor, per order. */
function stackIoRatio(f: Figures, io: FloorFigures): string {
  if (f.postgresCpuMs === undefined || io.postgresCpuMs === undefined) return "n/a";
  return (
    (f.appCpuMs + f.engineCpuMs + f.postgresCpuMs) /
    (io.cpuMs + io.engineCpuMs + io.postgresCpuMs)
  ).toFixed(2);
}

let stopDatabaseServer: () => Promise<void> = async () => undefined;

main()
  .finally(() => stopDatabaseServer())
  .then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`bench:orders failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
