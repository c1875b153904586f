import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import { responseOfBytes } from "../shims/buffered-response";

/** undici's default headers and body timeouts, so a hung server fails the call as global fetch would. */
const idleTimeoutMs = 300_000;
/**
 * undici's default keep-alive timeout: an idle connection is closed after 4 s, before the usual
 * server-side idle timeouts (Node's 5 s), so a request rarely meets a connection the server is
 * closing. A server's `Keep-Alive: timeout=` hint shortens it (Node's agent reads it).
 */
const idleSocketMs = 4_000;

/** Statuses whose response has no body: the Response constructor refuses one. */
const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);
const redirectStatuses = new Set([301, 302, 303, 307, 308]);

type FetchInput = Parameters<typeof fetch>[0];

/** The plain calls this client makes in node:http; anything else goes to the global fetch. */
function isPlain(input: FetchInput, init: RequestInit | undefined): input is string | URL {
  if (typeof input !== "string" && !(input instanceof URL)) return false;
  const body = init?.body;
  return (
    (body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array) &&
    (init?.redirect === undefined || init.redirect === "follow")
  );
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const given = init?.headers;
  const headers: Record<string, string> = {};
  if (given instanceof Headers) {
    given.forEach((value, name) => (headers[name] = value));
  } else if (Array.isArray(given)) {
    new Headers(given).forEach((value, name) => (headers[name] = value));
  } else if (given) {
    for (const [name, value] of Object.entries(given)) headers[name.toLowerCase()] = value;
  }
  // As fetch does for a string body without a type.
  if (typeof init?.body === "string" && headers["content-type"] === undefined) {
    headers["content-type"] = "text/plain;charset=UTF-8";
  }
  return headers;
}

/** Node's Buffers are backed by an ArrayBuffer (never a SharedArrayBuffer), which Response wants. */
function decoded(body: Buffer, encoding: string | undefined): Uint8Array<ArrayBuffer> {
  return decodedBuffer(body, encoding) as Uint8Array as Uint8Array<ArrayBuffer>;
}

function decodedBuffer(body: Buffer, encoding: string | undefined): Buffer {
  switch (encoding?.trim().toLowerCase()) {
    case undefined:
    case "":
    case "identity":
      return body;
    case "gzip":
    case "x-gzip":
      return zlib.gunzipSync(body);
    case "deflate":
      return zlib.inflateSync(body);
    case "br":
      return zlib.brotliDecompressSync(body);
    default:
      throw new Error(`unsupported content-encoding ${encoding}`);
  }
}

/**
 * A `fetch` for the Inngest client (its `fetch` option) that sends the SDK's plain JSON calls
 * (events, checkpoints) over node:http keep-alive agents and answers with the platform's
 * `Response`. Node's global fetch (undici) keeps connections alive too, but its per-request
 * work cost about 0.7 ms of CPU against 0.2 ms for node:http on this machine (docs/benchmarks.md),
 * and a webhook's first delivery sends one event. node-fetch (already installed under the SDK)
 * was the library candidate; it is slower than this, cannot send a web ReadableStream body and
 * returns a Response of its own, so this file wraps node:http instead. Calls it does not cover
 * (a Request object, a stream body, a redirect mode other than follow, a redirect answer) are
 * handed to the global fetch unchanged, and network errors reject as fetch's do
 * (`TypeError: fetch failed` with the cause).
 */
export function createKeepAliveFetch(): typeof fetch {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, timeout: idleSocketMs }),
    "https:": new https.Agent({ keepAlive: true, timeout: idleSocketMs }),
  };

  const keepAliveFetch = (input: FetchInput, init?: RequestInit): Promise<Response> => {
    if (!isPlain(input, init)) return fetch(input, init);
    const url = typeof input === "string" ? parsedUrl(input) : input;
    // A bad URL or another scheme: the global fetch answers as it would.
    const agent = url?.protocol === "http:" || url?.protocol === "https:" ? agents[url.protocol] : undefined;
    if (!url || !agent) return fetch(input, init);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);

    return new Promise<Response>((resolve, reject) => {
      const client = url.protocol === "https:" ? https : http;
      const req = client.request(url, {
        method: init?.method ?? "GET",
        headers: headersOf(init),
        agent,
        timeout: idleTimeoutMs,
      });
      const onAbort = () => req.destroy(signal?.reason as Error);
      signal?.addEventListener("abort", onAbort, { once: true });
      const fail = (error: unknown) => {
        signal?.removeEventListener("abort", onAbort);
        reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
      };
      req.on("timeout", () => req.destroy(new Error(`no answer for ${idleTimeoutMs} ms`)));
      req.on("error", fail);
      req.on("response", (res) => {
        const status = res.statusCode ?? 0;
        if (redirectStatuses.has(status) && res.headers.location) {
          // Rare for these calls; the platform fetch knows the rules (method, body, limits).
          res.resume();
          signal?.removeEventListener("abort", onAbort);
          fetch(input, init).then(resolve, reject);
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", fail);
        res.on("end", () => {
          signal?.removeEventListener("abort", onAbort);
          try {
            const headers = new Headers();
            for (let i = 0; i < res.rawHeaders.length; i += 2) {
              headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
            }
            const init = { status, statusText: res.statusMessage ?? "", headers };
            resolve(
              nullBodyStatuses.has(status)
                ? new Response(null, init)
                : responseOfBytes(decoded(Buffer.concat(chunks), res.headers["content-encoding"]), init),
            );
          } catch (error) {
            reject(new TypeError("fetch failed", { cause: error }));
          }
        });
      });
      const body = init?.body as string | Uint8Array | null | undefined;
      req.end(body ?? undefined);
    });
  };
  return keepAliveFetch as typeof fetch;
}
