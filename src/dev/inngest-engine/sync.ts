import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { AppClient } from "./app-client";
import type { EngineClock } from "./clock";
import type { EventStore } from "./event-store";
import { compileFunction, type FunctionRegistry } from "./registry";
import type { SdkFunctionConfig } from "./types";

export interface AppRegistration {
  url: string;
  appId: string;
  functions: SdkFunctionConfig[];
}

/**
 * Registering an app: every function is compiled first, so one unsupported expression
 * rejects the whole sync (naming the function and expression) and nothing half-applies.
 */
export class AppSync {
  constructor(
    private readonly deps: {
      logger: Logger;
      clock: EngineClock;
      events: EventStore;
      registry: FunctionRegistry;
      app: AppClient;
      onFunctionsChanged: () => Promise<void>;
    },
  ) {}

  /** In-band sync: `PUT <serve url>` with `x-inngest-sync-kind: in_band`; the reply is the config. */
  async sync(appUrl: string): Promise<AppRegistration> {
    const response = await this.deps.app.request(
      "PUT",
      appUrl,
      { url: appUrl },
      { "x-inngest-sync-kind": "in_band" },
    );
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      body = undefined;
    }
    if (response.status !== 200 || typeof body !== "object" || body === null) {
      throw new AppError(
        "upstream_unavailable",
        `Syncing ${appUrl} failed: HTTP ${response.status} ${response.body.slice(0, 300)}`,
      );
    }
    const reply = body as Record<string, unknown>;
    if (response.headers["x-inngest-sync-kind"] !== "in_band" && !Array.isArray(reply.functions)) {
      // The app refused in-band sync and registered out-of-band (POST /fn/register) instead.
      this.deps.logger.info({ appUrl }, "app synced out-of-band");
      return { url: appUrl, appId: "", functions: [] };
    }
    return this.register({
      url: typeof reply.url === "string" ? reply.url : appUrl,
      appId: typeof reply.app_id === "string" ? reply.app_id : "",
      functions: Array.isArray(reply.functions) ? (reply.functions as SdkFunctionConfig[]) : [],
    });
  }

  /** Out-of-band sync (`POST /fn/register` from the SDK) and the second half of in-band sync. */
  async register(registration: AppRegistration): Promise<AppRegistration> {
    const compiled = registration.functions.map((config) => compileFunction(config, registration.url));
    await this.deps.events.saveApp({ ...registration, now: this.deps.clock.now() });
    this.deps.registry.replaceApp(registration.url, compiled);
    await this.deps.onFunctionsChanged();
    for (const fn of compiled) {
      if (fn.ignoredOptions.length > 0) {
        this.deps.logger.warn(
          { functionId: fn.id, options: fn.ignoredOptions },
          "function options ignored by the local engine",
        );
      }
    }
    this.deps.logger.info(
      { appUrl: registration.url, appId: registration.appId, functions: compiled.map((fn) => fn.id) },
      "app synced",
    );
    return registration;
  }

  /** Functions stored by earlier syncs, so a restarted engine runs without waiting for a sync. */
  async restore(): Promise<void> {
    const rows = await this.deps.events.loadFunctions();
    const byApp = new Map<string, SdkFunctionConfig[]>();
    for (const row of rows) byApp.set(row.app_url, [...(byApp.get(row.app_url) ?? []), row.config]);
    for (const [url, configs] of byApp) {
      const compiled = [];
      for (const config of configs) {
        try {
          compiled.push(compileFunction(config, url));
        } catch (error) {
          this.deps.logger.warn(
            { err: error, functionId: config.id },
            "stored function no longer compiles; skipped",
          );
        }
      }
      this.deps.registry.replaceApp(url, compiled);
    }
  }
}
