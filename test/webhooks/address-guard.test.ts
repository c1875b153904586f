import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { checkEndpointUrl, isBlockedAddress, type Resolver } from "../../src/webhooks/address-guard";
import { postDelivery } from "../../src/webhooks/post";
import { newEndpointSecret, signedHeaders, signingSecrets } from "../../src/webhooks/signing";
import { parseConfig } from "../../src/config";

describe("the webhooks' SSRF guard", () => {
  it.each([
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "::ffff:127.0.0.1",
    "::ffff:a00:1",
    "not-an-ip",
  ])("refuses %s", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8"])(
    "lets %s through",
    (address) => {
      expect(isBlockedAddress(address)).toBe(false);
    },
  );

  const resolveTo =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as const);

  it("refuses a host name with one private address among public ones, and any when the guard is off", async () => {
    const rules = { requireHttps: true, blockPrivate: true, resolve: resolveTo("93.184.216.34", "10.0.0.7") };
    await expect(checkEndpointUrl("https://mixed.example/hook", rules)).rejects.toMatchObject({
      code: "validation_failed",
      message: expect.stringMatching(/10\.0\.0\.7.*not allowed/) as string,
    });
    await expect(
      checkEndpointUrl("https://public.example/hook", { ...rules, resolve: resolveTo("93.184.216.34") }),
    ).resolves.toBeInstanceOf(URL);
    await expect(
      checkEndpointUrl("http://127.0.0.1:3000/hook", { requireHttps: false, blockPrivate: false }),
    ).resolves.toBeInstanceOf(URL);
  });

  it("refuses http:// when https is required", async () => {
    await expect(
      checkEndpointUrl("http://public.example/hook", {
        requireHttps: true,
        blockPrivate: false,
      }),
    ).rejects.toMatchObject({ code: "validation_failed", message: expect.stringMatching(/https/) as string });
  });

  it("is off outside production unless configured on", () => {
    expect(parseConfig({}).WEBHOOK_BLOCK_PRIVATE_ADDRESSES).toBe(false);
    expect(parseConfig({}).WEBHOOK_REQUIRE_HTTPS).toBe(false);
    expect(parseConfig({ WEBHOOK_BLOCK_PRIVATE_ADDRESSES: "true" }).WEBHOOK_BLOCK_PRIVATE_ADDRESSES).toBe(
      true,
    );
  });
});

describe("one webhook attempt", () => {
  let server: http.Server;
  let base = "";
  const hits: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? "");
      if (req.url === "/redirect") res.writeHead(302, { location: "/target" }).end("moved");
      else res.writeHead(200).end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("never follows a redirect: a 3xx is a failed attempt", async () => {
    const outcome = await postDelivery({
      url: `${base}/redirect`,
      headers: {},
      body: "{}",
      timeoutMs: 5_000,
      blockPrivate: false,
    });
    expect(outcome).toMatchObject({ ok: false, statusCode: 302 });
    expect(hits).toEqual(["/redirect"]);
  });

  it("connects to the address it checked, whatever the name resolves to later", async () => {
    // The name resolves to the (allowed, in this test) loopback once; the socket goes there.
    let lookups = 0;
    const outcome = await postDelivery({
      url: `http://hooks.shop.test:${new URL(base).port}/pinned`,
      headers: {},
      body: "{}",
      timeoutMs: 5_000,
      blockPrivate: false,
      resolve: async () => {
        lookups++;
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
    expect(lookups).toBe(1);
  });

  it("refuses a private address at delivery when the guard is on, before connecting", async () => {
    const before = hits.length;
    const outcome = await postDelivery({
      url: `${base}/guarded`,
      headers: {},
      body: "{}",
      timeoutMs: 5_000,
      blockPrivate: true,
    });
    expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/not allowed/) as string });
    expect(hits).toHaveLength(before);
  });

  it("signs with both secrets during an overlap: each verifies alone", () => {
    const [current, previous] = [newEndpointSecret(), newEndpointSecret()];
    const now = new Date();
    const secrets = signingSecrets(
      {
        secret: current,
        previousSecret: previous,
        previousSecretExpiresAt: new Date(now.getTime() + 60_000),
      },
      now,
    );
    const body = JSON.stringify({ type: "shop/order.paid.v1", data: {} });
    const headers = signedHeaders(secrets, "msg-1", now, body);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    const expired = signingSecrets(
      { secret: current, previousSecret: previous, previousSecretExpiresAt: new Date(now.getTime() - 1) },
      now,
    );
    expect(() => new Webhook(previous).verify(body, signedHeaders(expired, "msg-1", now, body))).toThrow();
  });
});
