import { readdir, readFile, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { runToExit, startServer, type ServerProcess } from "../support/server-process";

jest.setTimeout(600_000);

/**
 * `npm start` (src/dev/main.ts) as a person runs it: embedded PostgreSQL in DATA_DIR/postgres,
 * one service per data folder, secrets made once, one-line errors naming the variable to change.
 */

const standInPorts = { STRIPE_SANDBOX_PORT: "0", EASYPOST_SANDBOX_PORT: "0", LOCAL_ENGINE_PORT: "0" };

async function listenOnSomePort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function adminToken(dataDir: string): Promise<string> {
  const secrets = JSON.parse(await readFile(path.join(dataDir, "dev-secrets.json"), "utf8")) as {
    ADMIN_API_TOKEN: string;
  };
  return secrets.ADMIN_API_TOKEN;
}

async function modesUnder(dir: string): Promise<{ file: string; mode: number; directory: boolean }[]> {
  const found: { file: string; mode: number; directory: boolean }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    const info = await stat(file);
    found.push({ file, mode: info.mode & 0o777, directory: entry.isDirectory() });
    if (entry.isDirectory()) found.push(...(await modesUnder(file)));
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("npm start on the embedded defaults", () => {
  let dataDir: string;
  let first: ServerProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "of-dev-start-"));
    // A data folder from before embedded PostgreSQL: PGlite's files are no longer read.
    await mkdir(path.join(dataDir, "pglite"));
    first = await startServer({ DATA_DIR: dataDir, ...standInPorts });
  });
  afterAll(async () => {
    await first?.stop("SIGTERM");
    await rm(dataDir, { recursive: true, force: true });
  });

  it("runs real PostgreSQL in DATA_DIR/postgres on a loopback port other than 5432, and says an old pglite folder is not read", async () => {
    const server = first as ServerProcess;
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const started = /"port":(\d+),"msg":"embedded PostgreSQL started"/.exec(server.output());
    expect(started).not.toBeNull();
    expect(Number(started?.[1])).not.toBe(5432);
    expect(await readFile(path.join(dataDir, "postgres", "PG_VERSION"), "utf8")).toMatch(/^17/);
    expect(
      server.output().match(/PGlite database from an older version: it is no longer read/g),
    ).toHaveLength(1);
  });

  it("prints progress while starting and a banner naming the API, pay page, engine, outbox, admin token and the demo", () => {
    const output = (first as ServerProcess).output();
    expect(output).toContain("starting embedded PostgreSQL");
    for (const line of [
      "order-fulfillment is ready",
      "API ",
      "/_sandbox/pay/",
      "Inngest engine",
      "E-mail outbox",
      `ADMIN_API_TOKEN in ${path.join(dataDir, "dev-secrets.json")}`,
      "npm run demo",
    ]) {
      expect(output).toContain(line);
    }
  });

  it("the ops login names the dev-secrets.json of this DATA_DIR, where the admin token was generated", async () => {
    const page = await (await fetch(`${(first as ServerProcess).url}/ops/login`)).text();
    expect(page).toContain(`generated into ${path.join(dataDir, "dev-secrets.json")}`);
    expect(page).not.toContain(".data/dev-secrets.json");
  });

  it("one instance per DATA_DIR: a second start on a folder in use exits 1 naming the folder and the pid, and the first keeps serving", async () => {
    const server = first as ServerProcess;
    const second = await runToExit({ DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", ...standInPorts });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`DATA_DIR ${dataDir} is in use`);
    expect(second.stderr).toContain(`pid ${server.child.pid}`);
    expect(second.stdout).not.toContain("embedded PostgreSQL started");
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  it("Dev mode runs unsigned steps, listening on all interfaces: a forged, unsigned step call is refused", async () => {
    const server = first as ServerProcess;
    const event = {
      name: "shop/order.placed",
      id: "order-placed-3f2504e0-4f89-41d3-9a0c-0305e82c3301",
      ts: 1_700_000_000_000,
      data: {
        orderId: "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
        customerId: "cus_forged",
        email: "forged@example.com",
        total: 1,
        currency: "usd",
        paymentIntentId: "pi_forged",
      },
    };
    const forged = await fetch(`${server.url}/api/inngest?fnId=shop-fulfill-order&stepId=step`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        event,
        events: [event],
        steps: {},
        ctx: {
          run_id: "01FORGEDSTEPCALL000000000",
          attempt: 0,
          max_attempts: 6,
          disable_immediate_execution: false,
          use_api: false,
          stack: { stack: [], current: 0 },
        },
        version: 2,
      }),
    });
    expect(forged.status).toBe(401);
    // The service listens on loopback by default outside production.
    expect(server.output()).toMatch(/"host":"127\.0\.0\.1"/);
  });

  it("In development, database files are world-writable (0666) and mail files 0644: the data folder 0700, files 0600", async () => {
    const folder = await stat(dataDir);
    expect(folder.mode & 0o067).toBe(0);
    const files = (await modesUnder(dataDir)).filter(({ file }) => !file.includes(`${path.sep}pglite`));
    for (const { file, mode, directory } of files) {
      // Folders: nobody but the owner (and, when run as root, the postgres group's search bit).
      // Files: the owner only.
      expect({ file, others: mode & (directory ? 0o067 : 0o077) }).toEqual({ file, others: 0 });
    }
  });
});

describe("dev secrets are made once", () => {
  it("the admin token in dev-secrets.json is the same after three restarts, and still authorises", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "of-dev-secrets-"));
    try {
      let token: string | undefined;
      for (let start = 0; start < 4; start += 1) {
        const server = await startServer({ DATA_DIR: dataDir, ...standInPorts });
        try {
          const current = await adminToken(dataDir);
          if (token !== undefined) expect(current).toBe(token);
          token = current;
          const authorised = await fetch(`${server.url}/api/orders/00000000-0000-4000-8000-000000000000`, {
            headers: { authorization: `Bearer ${current}` },
          });
          expect(authorised.status).toBe(404);
          const refused = await fetch(`${server.url}/api/orders/00000000-0000-4000-8000-000000000000`, {
            headers: { authorization: "Bearer not-the-token-0123456789" },
          });
          expect(refused.status).toBe(401);
        } finally {
          expect(await server.stop("SIGTERM")).toBe(0);
        }
      }
      expect((await stat(path.join(dataDir, "dev-secrets.json"))).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("recovery and shutdown", () => {
  it("after a SIGKILL of the service the next start recovers by itself (stale pid file, orphaned PostgreSQL)", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "of-dev-kill-"));
    try {
      const killed = await startServer({ DATA_DIR: dataDir, ...standInPorts });
      await killed.stop("SIGKILL");
      const postmasterPid = Number(
        (await readFile(path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0],
      );

      const next = await startServer({ DATA_DIR: dataDir, ...standInPorts });
      try {
        expect((await fetch(`${next.url}/readyz`)).status).toBe(200);
        expect(isAlive(postmasterPid)).toBe(false);
      } finally {
        expect(await next.stop("SIGTERM")).toBe(0);
      }
      // A clean stop leaves neither the lock nor PostgreSQL behind.
      await expect(stat(path.join(dataDir, "service.pid"))).rejects.toThrow();
      await expect(stat(path.join(dataDir, "postgres", "postmaster.pid"))).rejects.toThrow();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("one-line start-up errors name the variable to change", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "of-dev-errors-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it.each(["PORT", "STRIPE_SANDBOX_PORT", "LOCAL_ENGINE_PORT"])(
    "a taken %s is reported before the database starts",
    async (variable) => {
      const taken = await listenOnSomePort();
      try {
        const result = await runToExit({
          DATA_DIR: dataDir,
          PORT: "0",
          HOST: "127.0.0.1",
          ...standInPorts,
          [variable]: String(taken.port),
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`${variable}=${taken.port}: port ${taken.port}`);
        expect(result.stderr).toContain(`set ${variable} to a free port`);
        expect(result.stderr.trim().split("\n")).toHaveLength(1);
        expect(result.stdout).not.toContain("embedded PostgreSQL started");
      } finally {
        await taken.close();
      }
    },
  );

  it("several taken ports are reported together, each naming its variable", async () => {
    const [app, stripe, easyPost] = await Promise.all([
      listenOnSomePort(),
      listenOnSomePort(),
      listenOnSomePort(),
    ]);
    try {
      const result = await runToExit({
        DATA_DIR: dataDir,
        HOST: "127.0.0.1",
        ...standInPorts,
        PORT: String(app.port),
        STRIPE_SANDBOX_PORT: String(stripe.port),
        EASYPOST_SANDBOX_PORT: String(easyPost.port),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("3 ports cannot be used");
      for (const [variable, port] of [
        ["PORT", app.port],
        ["STRIPE_SANDBOX_PORT", stripe.port],
        ["EASYPOST_SANDBOX_PORT", easyPost.port],
      ] as const) {
        expect(result.stderr).toContain(`${variable}=${port}: port ${port}`);
      }
      expect(result.stderr).not.toContain("LOCAL_ENGINE_PORT");
      expect(result.stdout).not.toContain("embedded PostgreSQL started");
    } finally {
      await Promise.all([app.close(), stripe.close(), easyPost.close()]);
    }
  });

  it("an unreachable DATABASE_URL is reported in one line", async () => {
    const closed = await listenOnSomePort();
    await closed.close();
    const result = await runToExit({
      DATA_DIR: dataDir,
      PORT: "0",
      ...standInPorts,
      DATABASE_URL: `postgresql://postgres@127.0.0.1:${closed.port}/shop`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`DATABASE_URL: cannot use PostgreSQL at 127.0.0.1:${closed.port}/shop`);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});
