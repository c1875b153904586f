import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { createKeepAliveFetch } from "../../src/http/keep-alive-fetch";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  remotePort: number;
}

/** A server that records each request and answers by path. */
async function startServer(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        remotePort: req.socket.remotePort ?? 0,
      });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("keep-alive fetch for the Inngest client", () => {
  const keepAliveFetch = createKeepAliveFetch();
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    server = await startServer((req, res, body) => {
      switch (req.url) {
        case "/e/key":
          res
            .writeHead(200, { "content-type": "application/json", "x-echo": "yes" })
            .end(JSON.stringify({ ids: ["a"], status: 200, received: JSON.parse(body) as unknown }));
          return;
        case "/missing":
          res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
          return;
        case "/empty":
          res.writeHead(204).end();
          return;
        case "/gzip":
          res
            .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
            .end(gzipSync('{"compressed":true}'));
          return;
        case "/moved":
          res.writeHead(307, { location: "/e/key" }).end();
          return;
        case "/slow":
          return; // never answers
        default:
          res.writeHead(500).end("unexpected");
      }
    });
  });
  afterAll(() => server.close());

  it("POSTs a JSON body with its headers and answers with a platform Response", async () => {
    const res = await keepAliveFetch(`${server.url}/e/key`, {
      method: "POST",
      body: JSON.stringify([{ name: "shop/order.placed", id: "order-placed-1" }]),
      headers: { "Content-Type": "application/json", "X-Inngest-SDK": "js:v4" },
    });
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get("x-echo")).toBe("yes");
    expect(await res.clone().json()).toEqual({
      ids: ["a"],
      status: 200,
      received: [{ name: "shop/order.placed", id: "order-placed-1" }],
    });
    expect(await res.text()).toContain('"ids":["a"]');
    const request = server.seen.at(-1);
    expect(request).toMatchObject({ method: "POST", url: "/e/key" });
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers["x-inngest-sdk"]).toBe("js:v4");
    expect(request?.headers["content-length"]).toBe(String(Buffer.byteLength(request?.body ?? "")));
  });

  it("reuses its connection for the next call", async () => {
    const before = server.seen.length;
    for (let i = 0; i < 3; i++) {
      const res = await keepAliveFetch(new URL(`${server.url}/e/key`), { method: "POST", body: "[]" });
      await res.json();
    }
    const ports = new Set(server.seen.slice(before).map((request) => request.remotePort));
    expect(ports.size).toBe(1);
  });

  it("accepts Headers and header pairs, and types a string body as fetch does", async () => {
    await keepAliveFetch(`${server.url}/e/key`, {
      method: "POST",
      body: "[]",
      headers: new Headers({ Authorization: "Bearer a" }),
    });
    expect(server.seen.at(-1)?.headers).toMatchObject({
      authorization: "Bearer a",
      "content-type": "text/plain;charset=UTF-8",
    });
    await keepAliveFetch(`${server.url}/e/key`, {
      method: "POST",
      body: "[]",
      headers: [["Authorization", "Bearer b"]],
    });
    expect(server.seen.at(-1)?.headers.authorization).toBe("Bearer b");
  });

  it("answers error statuses and bodiless ones as Responses, and decodes gzip", async () => {
    const missing = await keepAliveFetch(`${server.url}/missing`);
    expect([missing.status, missing.ok, await missing.json()]).toEqual([404, false, { error: "not found" }]);
    const empty = await keepAliveFetch(`${server.url}/empty`, { method: "DELETE" });
    expect([empty.status, empty.body]).toEqual([204, null]);
    const gzip = await keepAliveFetch(`${server.url}/gzip`);
    expect(await gzip.json()).toEqual({ compressed: true });
  });

  it("follows a redirect as fetch does", async () => {
    const res = await keepAliveFetch(`${server.url}/moved`, { method: "POST", body: "[1]" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { received: unknown }).received).toEqual([1]);
  });

  it("rejects as fetch does: TypeError 'fetch failed' on a network error, the reason on abort", async () => {
    const closed = await startServer(() => undefined);
    await closed.close();
    const refused = await keepAliveFetch(`${closed.url}/e/key`, { method: "POST", body: "[]" }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).message).toBe("fetch failed");
    expect((refused as TypeError).cause).toMatchObject({ code: "ECONNREFUSED" });

    const controller = new AbortController();
    const pending = keepAliveFetch(`${server.url}/slow`, { signal: controller.signal }).catch(
      (error: unknown) => error,
    );
    // Abort once the server has the request, so it is in flight.
    while (!server.seen.some((request) => request.url === "/slow"))
      await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toMatchObject({ name: "AbortError" });
    await expect(
      keepAliveFetch(`${server.url}/e/key`, { signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("hands what it does not cover to the global fetch", async () => {
    const res = await keepAliveFetch(new Request(`${server.url}/e/key`, { method: "POST", body: "[2]" }));
    expect(((await res.json()) as { received: unknown }).received).toEqual([2]);
    // The global fetch lives in another realm under jest: compare the name, not the class.
    await expect(keepAliveFetch("not a url")).rejects.toMatchObject({ name: "TypeError" });
  });
});
