import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually } from "../support/eventually";
import { childEnv, startServer } from "../support/server-process";

jest.setTimeout(420_000);

/**
 * `npm start` under a supervisor (systemd, a CI step, an IDE's stop button) that stops what it
 * started by killing that pid: nothing it started may go on running. And a data folder deleted
 * under a running service: one line saying so, then the service stops.
 */

const root = path.resolve(__dirname, "../..");
// Every stand-in on a free port: the defaults (12111, 12112, 8288) may be taken on this machine.
const standInPorts = { STRIPE_SANDBOX_PORT: "0", EASYPOST_SANDBOX_PORT: "0", LOCAL_ENGINE_PORT: "0" };

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const firstLine = async (file: string) => Number((await readFile(file, "utf8")).split("\n")[0]);

describe("npm start under a supervisor", () => {
  it("kill <pid of npm start> stops the service and its embedded PostgreSQL", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "of-npm-start-"));
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: root,
      env: childEnv({
        HOME: dataDir,
        DATA_DIR: dataDir,
        PORT: "0",
        HOST: "127.0.0.1",
        npm_config_update_notifier: "false",
        ...standInPorts,
      }),
    });
    let output = "";
    npm.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const pids: number[] = [];
    try {
      await eventually("npm start listening", () => output.includes('"msg":"order-fulfillment listening"'), {
        attempts: 1200,
        everyMs: 100,
      });
      pids.push(await firstLine(path.join(dataDir, "service.pid")));
      pids.push(await firstLine(path.join(dataDir, "postgres", "postmaster.pid")));
      expect(pids.every(isAlive)).toBe(true);

      const npmExited = new Promise((resolve) => npm.once("exit", resolve));
      process.kill(npm.pid as number, "SIGTERM");
      await npmExited;

      await eventually("the service and PostgreSQL stopped", () => !pids.some(isAlive), {
        attempts: 300,
        everyMs: 100,
      });
    } finally {
      for (const pid of pids) if (isAlive(pid)) process.kill(pid, "SIGKILL");
      if (npm.exitCode === null) npm.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("the data folder deleted while the service runs", () => {
  it("says so once and stops, with no stack traces", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "of-deleted-dir-"));
    const server = await startServer({ DATA_DIR: dataDir, ...standInPorts });
    const postgresPid = await firstLine(path.join(dataDir, "postgres", "postmaster.pid"));
    try {
      const before = server.output().length;
      // PostgreSQL may write a file into the folder while it is being removed (ENOTEMPTY): retry.
      await rm(dataDir, { recursive: true, force: true, maxRetries: 20 });

      await eventually(
        "the service exited",
        () => server.child.exitCode !== null || server.child.signalCode !== null,
        { attempts: 600, everyMs: 100 },
      );
      const code = server.child.exitCode;
      const after = server.output().slice(before);
      expect(code).toBe(1);
      expect(after.match(/was deleted while the service was running/g)).toHaveLength(1);
      expect(after).not.toMatch(/\n\s+at /);
      expect(after.split("\n").filter((line) => /"level":(50|60)/.test(line))).toHaveLength(1);
      await eventually("PostgreSQL stopped", () => !isAlive(postgresPid), { attempts: 300, everyMs: 100 });
    } finally {
      if (server.child.exitCode === null) server.child.kill("SIGKILL");
      if (isAlive(postgresPid)) process.kill(postgresPid, "SIGKILL");
      await rm(dataDir, { recursive: true, force: true, maxRetries: 20 });
    }
  });
});

describe("npm start's log lines", () => {
  it("on a terminal: readable lines (pino-pretty); piped: JSON (every other process test reads those)", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "of-tty-start-"));
    // script(1) runs the service on a pseudo-terminal, as a person's shell would.
    const command = `exec ${process.execPath} --import tsx src/dev/main.ts`;
    const terminal = spawn("script", ["--quiet", "--return", "--command", command, "/dev/null"], {
      cwd: root,
      env: childEnv({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", TERM: "dumb", ...standInPorts }),
    });
    let output = "";
    terminal.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    let servicePid: number | undefined;
    try {
      await eventually("listening", () => /order-fulfillment listening/.test(output), {
        attempts: 1200,
        everyMs: 100,
      });
      servicePid = await firstLine(path.join(dataDir, "service.pid"));
      // Without the colours' escape sequences (ESC [ … m).
      const plain = output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
      expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*: order-fulfillment listening/m);
      expect(plain).not.toContain('"msg":');
    } finally {
      if (servicePid !== undefined && isAlive(servicePid)) process.kill(servicePid, "SIGTERM");
      await eventually(
        "the terminal closed",
        () => terminal.exitCode !== null || terminal.signalCode !== null,
        {
          attempts: 300,
          everyMs: 100,
        },
      ).catch(() => terminal.kill("SIGKILL"));
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
