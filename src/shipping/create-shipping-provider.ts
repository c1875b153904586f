import type { Config } from "../config";
import { createSandboxCarrier, type SandboxCarrier } from "./sandbox-carrier";

/** Where customers reach the shop: PUBLIC_URL, or this process itself when it is unset. */
export function publicBaseUrl(config: Config): string {
  return config.PUBLIC_URL ?? `http://localhost:${config.PORT}`;
}

/** The built-in sandbox carrier is the only carrier so far; a real one would be chosen here. */
export function createShippingProvider(config: Config): SandboxCarrier {
  return createSandboxCarrier({ publicUrl: publicBaseUrl(config) });
}
