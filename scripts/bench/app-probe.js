/**
 * Preloaded into the app process by `npm run bench:orders` (`node --require`): counts the SQL
 * statements the app sends through pg (Prisma's adapter included) and reports them, the
 * process's CPU time and its memory over IPC. Plain CommonJS, so the compiled app (`node
 * dist/server.js`, what production runs) needs no TypeScript loader beside it. Nothing of it runs
 * outside the benchmark.
 */
const pg = require("pg");

let statements = 0;
/** Statements by their text's first words (`BENCH_STATEMENT_TEXTS=1`), to see where they go. */
const byText = process.env.BENCH_STATEMENT_TEXTS === "1" ? new Map() : undefined;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  statements += 1;
  if (byText) {
    const first = args[0];
    const text =
      typeof first === "string" ? first : first && typeof first.text === "string" ? first.text : "?";
    const key = text.replace(/\s+/g, " ").trim().slice(0, 140);
    byText.set(key, (byText.get(key) || 0) + 1);
  }
  return query.apply(this, args);
};

process.on("message", (message) => {
  if (message.type === "stats") {
    const cpu = process.cpuUsage();
    process.send({
      type: "stats",
      statements,
      cpuMs: (cpu.user + cpu.system) / 1000,
      ...(byText ? { byText: Object.fromEntries(byText) } : {}),
    });
  } else if (message.type === "memory") {
    // After a full collection (the app runs with --expose-gc for this), what is still held.
    if (typeof globalThis.gc === "function") globalThis.gc();
    const { heapUsed, rss } = process.memoryUsage();
    process.send({ type: "memory", heapUsedAfterGc: heapUsed, rss, gc: typeof globalThis.gc === "function" });
  }
});
