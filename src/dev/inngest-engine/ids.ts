import { createHash, randomBytes } from "node:crypto";

/** ULIDs like Inngest's run and event ids: sortable by time, 26 Crockford base32 characters. */
const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

function encode(timeMs: number, entropy: Buffer): string {
  let time = "";
  let t = timeMs;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let bits = 0;
  let value = 0;
  let rest = "";
  for (const byte of entropy.subarray(0, 10)) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      rest += alphabet[(value >> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return time + rest;
}

let lastTimeMs = -1;
let lastEntropy = Buffer.alloc(10);

/** Monotonic within this process: ids made in the same millisecond still sort by creation. */
export function ulid(timeMs: number): string {
  if (timeMs <= lastTimeMs) {
    for (let i = lastEntropy.length - 1; i >= 0; i--) {
      lastEntropy[i] = ((lastEntropy[i] ?? 0) + 1) & 0xff;
      if (lastEntropy[i] !== 0) break;
    }
    return encode(lastTimeMs, lastEntropy);
  }
  lastTimeMs = timeMs;
  lastEntropy = randomBytes(10);
  // Leave headroom so increments within one millisecond never wrap.
  lastEntropy[0] = (lastEntropy[0] ?? 0) & 0x7f;
  return encode(timeMs, lastEntropy);
}

/**
 * The SDK sends `x-inngest-event-id-seed: <millis>,<base64 entropy>` and retries a failed send
 * with the same seed; deriving ids from it makes such a retry land on the same event ids.
 */
export function eventIdFromSeed(seed: string, index: number): string | undefined {
  const [millis, entropy] = seed.split(",");
  const timeMs = Number(millis);
  if (!entropy || !Number.isSafeInteger(timeMs) || timeMs < 0) return undefined;
  return encode(timeMs, createHash("sha256").update(`${entropy}:${index}`).digest());
}
