/**
 * Preloaded into the app process by `npm run bench:orders` (`node --require`): counts the SQL
 * statements the app sends through pg (Prisma's adapter included) and reports them, the
 * process's CPU time and its memory over IPC. Plain CommonJS, so the compiled app (`node
 * dist/server.js`, what production runs) needs no TypeScript loader beside it. Nothing of it runs
 * outside the benchmark.
 */
const net = require("net");
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

/**
 * Socket writes (each one hand-over to the kernel: a statement, a request, an answer, an SMTP
 * command), keyed by the listening port they go to (`out:<port>`) or came in on (`in:<port>`),
 * so the driver can name the peer. Every exchange the process has with the world is at least one,
 * which makes them the process's I/O count beside the statements: it shows how much of the app's
 * CPU over the floor's is I/O the floor does not do (Stripe, EasyPost, SMTP, the shop's HTTP).
 */
const socketWrites = new Map();
const writeGeneric = net.Socket.prototype._writeGeneric;
if (typeof writeGeneric === "function") {
  net.Socket.prototype._writeGeneric = function countedWrite(...args) {
    // A socket still connecting keeps the write and makes it again once connected: count that one.
    if (this.connecting) return writeGeneric.apply(this, args);
    const key = this.server ? `in:${this.localPort}` : `out:${this.remotePort}`;
    socketWrites.set(key, (socketWrites.get(key) || 0) + 1);
    return writeGeneric.apply(this, args);
  };
}

process.on("message", (message) => {
  if (message.type === "stats") {
    const cpu = process.cpuUsage();
    process.send({
      type: "stats",
      statements,
      socketWrites: Object.fromEntries(socketWrites),
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
