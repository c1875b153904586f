/**
 * Preloaded into the app process by `npm run bench:orders` (`node --import`): counts the SQL
 * statements the app sends through pg (Prisma's adapter included) and reports them and the
 * process's CPU time over IPC. Nothing of it runs outside the benchmark.
 */
import pg from "pg";

let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
  statements += 1;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

process.on("message", (message: { type?: string }) => {
  if (message.type !== "stats") return;
  const cpu = process.cpuUsage();
  process.send?.({ type: "stats", statements, cpuMs: (cpu.user + cpu.system) / 1000 });
});
