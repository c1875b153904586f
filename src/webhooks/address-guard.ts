import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { AppError } from "../errors";

/**
 * The SSRF guard of outbound webhooks (decision 0198): an endpoint may not reach the service's own
 * network. Refused: loopback, private (RFC 1918), carrier-grade NAT, link-local (cloud metadata at
 * 169.254.169.254), unique-local IPv6, unspecified, multicast and broadcast addresses, and IPv4
 * ones in IPv6 clothing (::ffff:10.0.0.1). Checked at creation and again at each attempt, on the
 * address the connection is then made to, so a DNS answer that changes between the two (DNS
 * rebinding) cannot steer a delivery inside.
 */
const blocked = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
] as const)
  blocked.addSubnet(network, prefix, "ipv6");

/** Whether a delivery may connect to this IP address when the guard is on. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return blocked.check(mapped[1], "ipv4");
  // ::ffff:a00:1 (hex form of a mapped IPv4 address).
  const hexMapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hexMapped?.[1] && hexMapped[2]) {
    const high = parseInt(hexMapped[1], 16);
    const low = parseInt(hexMapped[2], 16);
    return blocked.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, "ipv4");
  }
  return blocked.check(address, "ipv6");
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name (or takes an IP literal) to every address it has. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const literal = hostname.replace(/^\[|\]$/g, "");
  const family = isIP(literal);
  if (family !== 0) return [{ address: literal, family: family as 4 | 6 }];
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

/**
 * The address to connect to: the first of the host's addresses, once every one of them passed the
 * guard (a host with one private address among public ones is refused: which one a client picks is
 * not ours to know). Throws a message fit for the delivery log or a 400.
 */
export async function resolveAllowed(
  hostname: string,
  options: { blockPrivate: boolean; resolve?: Resolver },
): Promise<ResolvedAddress> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await (options.resolve ?? systemResolver)(hostname);
  } catch (error) {
    throw new Error(`cannot resolve ${hostname}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const [first] = addresses;
  if (!first) throw new Error(`cannot resolve ${hostname}: no address`);
  if (options.blockPrivate) {
    const refused = addresses.find((candidate) => isBlockedAddress(candidate.address));
    if (refused)
      throw new Error(
        `${hostname} resolves to ${refused.address}, a loopback, private, link-local or otherwise internal address: not allowed`,
      );
  }
  return first;
}

export interface EndpointUrlRules {
  requireHttps: boolean;
  blockPrivate: boolean;
  resolve?: Resolver;
}

/** An endpoint URL as the admin API takes it, or a 400 `validation_failed` saying what is wrong. */
export async function checkEndpointUrl(raw: string, rules: EndpointUrlRules): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError("validation_failed", `url: not a URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new AppError("validation_failed", "url: must be an https:// (or, outside production, http://) URL");
  if (rules.requireHttps && url.protocol !== "https:")
    throw new AppError("validation_failed", "url: must be https:// (WEBHOOK_REQUIRE_HTTPS)");
  if (url.username !== "" || url.password !== "")
    throw new AppError(
      "validation_failed",
      "url: must not carry credentials; the signature authenticates us",
    );
  if (url.hash !== "") throw new AppError("validation_failed", "url: must not have a #fragment");
  if (rules.blockPrivate) {
    try {
      await resolveAllowed(url.hostname, {
        blockPrivate: true,
        ...(rules.resolve ? { resolve: rules.resolve } : {}),
      });
    } catch (error) {
      throw new AppError(
        "validation_failed",
        `url: ${error instanceof Error ? error.message : String(error)} (WEBHOOK_BLOCK_PRIVATE_ADDRESSES)`,
      );
    }
  }
  return url;
}
