/**
 * Throughput of the local engine: N events, each starting a run of STEPS sequential steps.
 *   npx tsx test/dev/inngest-engine/bench/throughput.ts [events=1000] [steps=8] [--split]
 * By default the app runs in the engine's process (as `npm start` runs them); --split runs
 * the app in a child process and reports both processes' CPU time per run.
 */
import { fork } from "node:child_process";
import path from "node:path";
import pino from "pino";
import { createLocalEngine } from "../../../../src/dev/inngest-engine";
import { createTestDatabase } from "../../../support/database";
import { startBenchApp } from "./bench-app";

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
  const split = process.argv.includes("--split");
  const total = Number(args[0] ?? 1000);
  const steps = Number(args[1] ?? 8);
  const db = await createTestDatabase({ migrated: false });
  const engine = createLocalEngine({ databaseUrl: db.url, logger: pino({ level: "warn" }) });
  const { url: engineUrl } = await engine.listen(0);

  let appUrl: string;
  let closeApp: () => Promise<void>;
  if (split) {
    const child = fork(path.join(__dirname, "bench-app.ts"), [engineUrl, String(steps)], {
      execArgv: ["--import", "tsx"],
    });
    appUrl = await new Promise<string>((resolve) =>
      child.once("message", (message: { url: string }) => resolve(message.url)),
    );
    closeApp = async () => {
      child.kill();
    };
  } else {
    const app = await startBenchApp({ engineUrl, steps });
    appUrl = app.url;
    closeApp = app.close;
  }
  await engine.sync(appUrl);
  const appCpu = async (): Promise<number> => {
    const usage = (await (await fetch(new URL("/cpu", appUrl))).json()) as NodeJS.CpuUsage;
    return (usage.user + usage.system) / 1000;
  };

  const cpuBefore = process.cpuUsage();
  const appCpuBefore = split ? await appCpu() : 0;
  const started = Date.now();
  const batch = 20;
  const sending: Promise<unknown>[] = [];
  for (let i = 0; i < total; i += batch) {
    const events = Array.from({ length: Math.min(batch, total - i) }, (_, j) => ({
      name: "bench/order",
      data: { orderId: `o-${i + j}` },
    }));
    sending.push(
      fetch(`${engineUrl}/e/bench`, { method: "POST", body: JSON.stringify(events) }).then((r) => r.json()),
    );
    if (sending.length >= 4) await sending.shift();
  }
  await Promise.all(sending);
  const sentIn = Date.now() - started;
  await engine.drain();
  const elapsed = Date.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const engineCpuMs = (cpu.user + cpu.system) / 1000;
  const appCpuMs = split ? (await appCpu()) - appCpuBefore : undefined;
  const { data } = (await (await fetch(`${engineUrl}/v1/runs?status=Completed&limit=10000`)).json()) as {
    data: unknown[];
  };
  console.log(
    JSON.stringify({
      mode: split ? "app in its own process" : "app in the engine's process",
      runs: total,
      completed: data.length,
      stepsPerRun: steps,
      sentInMs: sentIn,
      elapsedMs: elapsed,
      runsPerSecond: Math.round((total / elapsed) * 1000),
      stepsPerSecond: Math.round(((total * steps) / elapsed) * 1000),
      cpuMsPerRun: split
        ? { engine: +(engineCpuMs / total).toFixed(2), app: +((appCpuMs ?? 0) / total).toFixed(2) }
        : { engineAndApp: +(engineCpuMs / total).toFixed(2) },
    }),
  );
  await engine.close();
  await closeApp();
  await db.drop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
