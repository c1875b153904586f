import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually } from "../support/eventually";
import { startServer, type ServerProcess } from "../support/server-process";

jest.setTimeout(300_000);

/**
 * `PORT=0 npm start` (any free port) with PUBLIC_URL unset: PUBLIC_URL's default, the pay page's
 * return to the shop and every link in an e-mail name the port the service really listens on,
 * never `localhost:0`.
 */
describe("PORT=0: every link names the real port", () => {
  let dataDir: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "of-any-port-"));
    server = await startServer({
      DATA_DIR: dataDir,
      PORT: "0",
      STRIPE_SANDBOX_PORT: "0",
      EASYPOST_SANDBOX_PORT: "0",
      LOCAL_ENGINE_PORT: "0",
    });
  });
  afterAll(async () => {
    await server?.stop("SIGTERM");
    await rm(dataDir, { recursive: true, force: true });
  });

  it("the pay page returns to the real port, and the first e-mail's links name it", async () => {
    const { url, port } = server as ServerProcess;
    expect(port).toBeGreaterThan(0);
    const publicBase = `http://localhost:${port}`;

    const checkout = await fetch(`${url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus_any_port",
        email: "any-port@example.com",
        items: [{ sku: "MUG-LOGO", quantity: 1 }],
      }),
    });
    expect(checkout.status).toBe(201);
    const { checkoutUrl } = (await checkout.json()) as { checkoutUrl: string };

    const paid = await fetch(checkoutUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "outcome=authorized",
      redirect: "manual",
    });
    expect(paid.status).toBe(303);
    expect(paid.headers.get("location")).toMatch(new RegExp(`^${publicBase}/checkout/success\\?`));

    // The order ships by itself (local engine, EasyPost stand-in); its e-mail lands in the outbox.
    const outbox = path.join(dataDir, "outbox");
    let mail = "";
    await eventually(
      "an e-mail in the outbox",
      async () => {
        const files = (await readdir(outbox).catch(() => [] as string[])).filter((file) =>
          file.endsWith(".eml"),
        );
        if (files.length === 0) return false;
        mail = await readFile(path.join(outbox, files[0] as string), "utf8");
        return true;
      },
      { attempts: 1200, everyMs: 100 },
    );
    // Quoted-printable may fold long lines ("=\r\n"): unfold before looking for links.
    const unfolded = mail.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
    const links = unfolded.match(/https?:\/\/localhost:\d+[^\s"<>]*/g) ?? [];
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(link.startsWith(`${publicBase}/`)).toBe(true);
    expect(unfolded).not.toContain("localhost:0/");
  });
});
