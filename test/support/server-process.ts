import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

const root = path.resolve(__dirname, "../..");
// Node itself with tsx's loader, not the tsx CLI: the CLI runs the server in a grandchild that a
// SIGKILL sent to the CLI would leave running.
const entryPoints = {
  /** `npm start`: stand-ins for whatever is not configured, DATA_DIR locked for the process. */
  development: "src/dev/main.ts",
  /** What the image runs (dist/server.js): every endpoint configured, no stand-in. */
  production: "src/server.ts",
} as const;
export type EntryPoint = keyof typeof entryPoints;
const nodeArgs = (entry: EntryPoint) => ["--import", "tsx", entryPoints[entry]];

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Environment for a child process: only what is given, plus what Node needs to run. */
export function childEnv(vars: Record<string, string>): Record<string, string> {
  // eslint-disable-next-line no-restricted-properties -- the child needs PATH to find node
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", ...vars };
}

export function runToExit(
  vars: Record<string, string>,
  // Generous: a safety net for a hung child, not a measure (a loaded two-core machine starts slowly).
  timeoutMs = 90_000,
  entry: EntryPoint = "development",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(entry), { cwd: root, env: childEnv(vars) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not exit within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts the development entry point (`npm start`) and resolves once it logs the port it listens on. */
export function startServer(
  vars: Record<string, string>,
  timeoutMs = 120_000,
  entry: EntryPoint = "development",
): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs(entry), {
      cwd: root,
      env: childEnv({ PORT: "0", HOST: "127.0.0.1", ...vars }),
    });
    let log = "";
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${log}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      const match = /"port":(\d+),"msg":"order-fulfillment listening"/.exec(log);
      if (!match) return;
      clearTimeout(timer);
      const port = Number(match[1]);
      resolve({
        child,
        port,
        url: `http://127.0.0.1:${port}`,
        output: () => log,
        async stop(signal = "SIGTERM") {
          if (child.exitCode !== null) return child.exitCode;
          child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${log}`));
    });
  });
}
