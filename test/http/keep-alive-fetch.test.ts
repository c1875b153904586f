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
          res.writeHead(200, { "content-type": "application/json", "x-echo": "yes" }).end(
            JSON.stringify({
              ids: ["a"],
              status: 200,
              received: body ? (JSON.parse(body) as unknown) : null,
            }),
          );
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
        case "/bom":
          // A byte order mark, a multi-byte character split nowhere special, and a form body type.
          res
            .writeHead(200, { "content-type": "application/x-www-form-urlencoded" })
            .end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("caf%C3%A9=cr%C3%A8me&n=1 ✓")]));
          return;
        case "/not-json":
          res.writeHead(200, { "content-type": "application/json" }).end("{nope");
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

  describe("its Response, which keeps the body as bytes", () => {
    /** What a sequence of reads gives: each read's value, or the name of the error it rejected with. */
    async function reads(res: Response, ...steps: ((r: Response) => Promise<unknown> | unknown)[]) {
      const outcomes: unknown[] = [];
      for (const step of steps) {
        try {
          outcomes.push(await step(res));
        } catch (error) {
          outcomes.push(`${(error as Error).name}`);
        }
      }
      return outcomes;
    }
    /** The platform's Response over the same answer, built as node's fetch would. */
    async function platform(path: string): Promise<Response> {
      const res = await fetch(`${server.url}${path}`);
      return new Response(await res.arrayBuffer(), {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    }
    const text = (r: Response) => r.text();
    const json = (r: Response) => r.json();
    const bytes = async (r: Response) => [...new Uint8Array(await r.arrayBuffer())];
    const used = (r: Response) => r.bodyUsed;
    const streamed = async (r: Response) => {
      const chunks: number[] = [];
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) chunks.push(...chunk);
      return chunks;
    };

    it("reads as the platform's Response does, once, with the same errors", async () => {
      const sequences: [string, ((r: Response) => unknown)[]][] = [
        ["/e/key", [used, json, used, text, bytes, (r) => r.clone()]],
        ["/e/key", [text, json]],
        ["/bom", [text, used]],
        ["/bom", [bytes]],
        [
          "/bom",
          [
            async (r) => {
              const form = await r.formData();
              return [form.get("\uFEFFcafé"), form.get("n")];
            },
            text,
          ],
        ],
        ["/bom", [async (r) => (await r.blob()).type, (r) => r.bytes()]],
        ["/bom", [streamed, used, text]],
        ["/bom", [text, (r) => r.body?.locked, streamed]],
        ["/not-json", [json, text]],
        ["/missing", [(r) => [r.status, r.statusText, r.ok, r.headers.get("content-type")], json]],
      ];
      for (const [path, steps] of sequences) {
        const ours = await keepAliveFetch(`${server.url}${path}`);
        expect(ours).toBeInstanceOf(Response);
        expect([path, await reads(ours, ...steps)]).toEqual([
          path,
          await reads(await platform(path), ...steps),
        ]);
      }
    });

    it("gives each clone its own read, and a copy of the bytes to each reader", async () => {
      const res = await keepAliveFetch(`${server.url}/e/key`, { method: "POST", body: "[7]" });
      const copy = res.clone();
      const first = new Uint8Array(await res.arrayBuffer());
      first.fill(0);
      expect(((await copy.json()) as { received: unknown }).received).toEqual([7]);
      expect([res.bodyUsed, copy.bodyUsed]).toEqual([true, true]);
      expect(() => res.clone()).toThrow(TypeError);

      // A clone taken after the stream was asked for is the platform's own.
      const streamedFirst = await keepAliveFetch(`${server.url}/e/key`, { method: "POST", body: "[8]" });
      expect(streamedFirst.body).not.toBeNull();
      const second = streamedFirst.clone();
      expect(((await second.json()) as { received: unknown }).received).toEqual([8]);
      expect(((await streamedFirst.json()) as { received: unknown }).received).toEqual([8]);
    });
  });
});
