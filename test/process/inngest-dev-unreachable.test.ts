import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually } from "../support/eventually";
import { startServer, type ServerProcess } from "../support/server-process";

jest.setTimeout(300_000);

/**
 * `INNGEST_DEV` set and no dev server listening (a developer who forgot `npx inngest-cli dev`):
 * /readyz says Inngest is unreachable, a Stripe delivery is answered 503 naming Inngest (never
 * `database_unavailable`, which sent people looking at PostgreSQL), and SIGINT stops the service
 * without waiting out the shutdown deadline.
 */

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface SignedDelivery {
  payload: string;
  header: string;
}

describe("INNGEST_DEV with no dev server listening", () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  let devServerUrl: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "of-no-dev-server-"));
    devServerUrl = `http://127.0.0.1:${await closedPort()}`;
    server = await startServer({
      DATA_DIR: dataDir,
      INNGEST_DEV: devServerUrl,
      STRIPE_SANDBOX_PORT: "0",
      EASYPOST_SANDBOX_PORT: "0",
    });
  });
  afterAll(async () => {
    if (server?.child.exitCode === null) server.child.kill("SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  });

  it("/readyz answers 503 with an inngest check naming the dev server's address, and start-up says so", async () => {
    const { url } = server as ServerProcess;
    // Said right after the "listening" line the server is started by, once readiness was asked.
    await eventually(
      "start-up says it is not ready",
      () => /"msg":"listening, but not ready: .*Inngest dev server at/.test(server?.output() ?? ""),
      { attempts: 600, everyMs: 50 },
    );
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { checks: Record<string, { ok: boolean; detail?: string }> };
    expect(body.checks.database).toEqual({ ok: true });
    expect(body.checks.inngest?.ok).toBe(false);
    expect(body.checks.inngest?.detail).toContain(`the Inngest dev server at ${devServerUrl} is unreachable`);
  });

  it("a paid checkout's webhook is answered 503 inngest_unavailable, not database_unavailable", async () => {
    const { url } = server as ServerProcess;
    const checkout = await fetch(`${url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus_no_dev_server",
        email: "no-dev-server@example.com",
        items: [{ sku: "MUG-LOGO", quantity: 1 }],
      }),
    });
    expect(checkout.status).toBe(201);
    const { checkoutUrl } = (await checkout.json()) as { checkoutUrl: string };
    const pay = new URL(checkoutUrl);
    const stripeBase = pay.origin;

    // The customer pays on the stand-in's page; the stand-in then delivers the event to the app.
    const paid = await fetch(checkoutUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "outcome=authorized",
      redirect: "manual",
    });
    expect(paid.status).toBe(303);

    let completed: { eventId: string; type: string; status?: number } | undefined;
    await eventually(
      "the stand-in tried to deliver checkout.session.completed",
      async () => {
        const { deliveries } = (await (await fetch(`${stripeBase}/_sandbox/deliveries`)).json()) as {
          deliveries: { eventId: string; type: string; status?: number }[];
        };
        completed = deliveries.find((delivery) => delivery.type === "checkout.session.completed");
        return completed !== undefined;
      },
      { attempts: 600, everyMs: 100 },
    );
    if (completed === undefined) throw new Error("unreachable: eventually returned");
    expect(completed.status).toBe(503);

    // The same signed event, delivered by hand, to read the answer's body.
    const signed = (await (
      await fetch(`${stripeBase}/_sandbox/events/${completed.eventId}/signed`)
    ).json()) as SignedDelivery;
    const res = await fetch(`${url}/api/stripe/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signed.header },
      body: signed.payload,
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("inngest_unavailable");
    expect(body.error.message).toMatch(/^Inngest did not accept shop\/order\.placed/);
    expect(server?.output()).not.toContain("database_unavailable");
  });

  it("SIGINT (Ctrl-C) stops it cleanly, before the shutdown deadline", async () => {
    const running = server as ServerProcess;
    const code = await running.stop("SIGINT");
    expect(code).toBe(0);
    expect(running.output()).not.toContain("graceful shutdown took too long");
    expect(running.output()).toContain('"msg":"shutdown complete"');
  });
});
