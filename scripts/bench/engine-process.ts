/**
 * The local engine in a process of its own, for `npm run bench:orders`: its CPU time can then be
 * read apart from the app's. Driven over IPC: it answers `{url}` once listening, `stats` with
 * the engine's counters and its CPU time, `sync <url>`, and `close`.
 */
import pino from "pino";
import { createEngineClock, createLocalEngine } from "../../src/dev/inngest-engine";

interface Options {
  databaseUrl: string;
  checkpointing: boolean;
  timeScale: number;
  cronMinRealIntervalMs: number;
  appReplicaOrigins: string[];
}

type Message = { type: "stats" } | { type: "sync"; url: string } | { type: "close" };

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? "{}") as Options;
  const engine = createLocalEngine({
    databaseUrl: options.databaseUrl,
    logger: pino({ level: "warn" }),
    clock: createEngineClock({ timeScale: options.timeScale }),
    checkpointing: options.checkpointing,
    poolSize: 16,
    cronMinRealIntervalMs: options.cronMinRealIntervalMs,
    appReplicaOrigins: options.appReplicaOrigins,
  });
  const { url } = await engine.listen(0, "127.0.0.1");
  const send = (message: unknown): void => {
    process.send?.(message);
  };
  process.on("message", (message: Message) => {
    void (async () => {
      if (message.type === "stats") {
        const cpu = process.cpuUsage();
        send({ type: "stats", stats: engine.stats(), cpuMs: (cpu.user + cpu.system) / 1000 });
      } else if (message.type === "sync") {
        await engine.sync(message.url);
        send({ type: "synced" });
      } else {
        await engine.close();
        send({ type: "closed" });
        process.exit(0);
      }
    })().catch((error: unknown) => {
      process.stderr.write(`engine process: ${String(error)}\n`);
      process.exit(1);
    });
  });
  send({ type: "ready", url });
}

void main();
