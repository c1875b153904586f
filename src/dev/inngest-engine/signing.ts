import { createHmac } from "node:crypto";

/**
 * Signs requests the way Inngest Cloud does, so an app in cloud mode accepts them:
 * `X-Inngest-Signature: t=<unix seconds>&s=<hex HMAC-SHA256(canonical body + t)>`, keyed with
 * the signing key minus its `signkey-<env>-` prefix (used as text, like the SDK does).
 */

/** RFC 8785 (JCS) canonical JSON for plain JSON values: sorted keys, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  }
  const record = value as Record<string, unknown>;
  const entries = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${entries.join(",")}}`;
}

export function signatureHeader(canonicalBody: string, signingKey: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000).toString();
  const key = signingKey.replace(/^signkey-\w+-/, "");
  const s = createHmac("sha256", key)
    .update(canonicalBody + t)
    .digest("hex");
  return `t=${t}&s=${s}`;
}
