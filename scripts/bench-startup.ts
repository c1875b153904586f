/**
 * `npm run bench:startup`: how long `npm start` (the development entry point) takes to answer
 * GET /readyz with 200, on an empty DATA_DIR (first start: the embedded cluster's initdb,
 * migrations, demo catalog) and on the same folder again (restart). Runs the service as
 * `node --import tsx src/dev/main.ts`, as `npm start` does, on free ports, in a temporary folder.
 *
 *   npm run bench:startup -- --runs 3
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const root = path.resolve(__dirname, "..");

async function timeToReady(dataDir: string): Promise<{ ms: number; child: ChildProcess }> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "src/dev/main.ts"], {
    cwd: root,
    env: {
      // eslint-disable-next-line no-restricted-properties -- the child needs PATH to find its tools
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      DATA_DIR: dataDir,
      PORT: "0",
      STRIPE_SANDBOX_PORT: "0",
      LOCAL_ENGINE_PORT: "0",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const deadline = started + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${stderr}`);
    if (performance.now() > deadline) throw new Error(`no /readyz 200 within 180 s:\n${stderr}`);
    // PORT=0: the port is known once the service logs it; until then it is not ready either.
    const port = /"port":(\d+),"msg":"order-fulfillment listening"/.exec(stdout)?.[1];
    const ok =
      port !== undefined &&
      (await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (res) => res.status === 200,
        () => false,
      ));
    if (ok) return { ms: performance.now() - started, child };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await exited;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: "string", default: "3" } } });
  const runs = Math.max(1, Number(values.runs));
  const empty: number[] = [];
  const existing: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const dataDir = await mkdtemp(path.join(tmpdir(), "order-fulfillment-bench-startup-"));
    try {
      const first = await timeToReady(dataDir);
      empty.push(first.ms);
      await stop(first.child);
      const again = await timeToReady(dataDir);
      existing.push(again.ms);
      await stop(again.child);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const show = (label: string, figures: number[]) => {
    const sorted = [...figures].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    process.stdout.write(
      `${label}: median ${(median / 1000).toFixed(2)} s (runs: ${figures.map((ms) => (ms / 1000).toFixed(2)).join(", ")} s)\n`,
    );
  };
  process.stdout.write(`time from process start to GET /readyz 200, ${runs} run(s)\n`);
  show("empty DATA_DIR   ", empty);
  show("existing DATA_DIR", existing);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:startup failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
