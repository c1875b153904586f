import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { resolveAllowed, type Resolver } from "./address-guard";

/** What one attempt got back: an HTTP status, or why there was none. */
export type PostOutcome =
  | { ok: boolean; statusCode: number; excerpt: string; error?: undefined }
  | { ok: false; statusCode?: undefined; excerpt?: undefined; error: string };

/** The most of an answer kept in the delivery log. */
export const excerptLimit = 1024;

/**
 * POSTs one signed delivery. The host is resolved here and every address checked by the guard
 * (when on), and the socket connects to the checked address through `lookup`, so the name is
 * never resolved again behind our back (DNS rebinding); TLS still verifies the certificate for the
 * host name. Redirects are never followed: a 3xx is a failed attempt, like any answer outside 2xx.
 */
export async function postDelivery(input: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  blockPrivate: boolean;
  resolve?: Resolver;
}): Promise<PostOutcome> {
  const url = new URL(input.url);
  let pinned: { address: string; family: 4 | 6 };
  try {
    pinned = await resolveAllowed(url.hostname, {
      blockPrivate: input.blockPrivate,
      ...(input.resolve ? { resolve: input.resolve } : {}),
    });
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  const transport = url.protocol === "https:" ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    const request = transport.request(
      url,
      {
        method: "POST",
        lookup,
        // One socket per attempt: a pooled one could have been opened to another address.
        agent: false,
        headers: {
          ...input.headers,
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(input.body)),
          "user-agent": "order-fulfillment-webhooks/1",
        },
        timeout: input.timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on("data", (chunk: Buffer) => {
          if (kept < excerptLimit) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        response.on("end", () => {
          const statusCode = response.statusCode ?? 0;
          resolve({
            ok: statusCode >= 200 && statusCode < 300,
            statusCode,
            excerpt: Buffer.concat(chunks).subarray(0, excerptLimit).toString("utf8"),
          });
        });
        response.on("error", (error) => resolve({ ok: false, error: error.message }));
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${input.timeoutMs} ms`)));
    request.on("error", (error) => resolve({ ok: false, error: error.message }));
    request.end(input.body);
  });
}
