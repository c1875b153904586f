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
 * How the engine asks an app to sync:
 * - `out-of-band` (default), what the Inngest dev server and self-hosted Inngest send (inngest/inngest
 *   `pkg/deploy/deploy.go` `Ping`): `PUT <serve url>` with body `{url}`, `x-inngest-server-kind`
 *   (`dev` unsigned, `cloud` when signed), no `x-inngest-sync-kind`; the SDK answers by POSTing
 *   its functions to our `/fn/register` before it replies;
 * - `in-band`, what Inngest Cloud sends: the same PUT with `x-inngest-sync-kind: in_band`, signed;
 *   the reply is the config and the SDK calls nothing.
 */
export type SyncKind = "out-of-band" | "in-band";

/**
 * Registering an app: every function is compiled first, so one unsupported expression
 * rejects the whole sync (naming the function and expression) and nothing half-applies.
 */
export class AppSync {
  /** Registrations received (POST /fn/register and in-band replies), to tell a sync that registered elsewhere. */
  private registrations = 0;
  private lastRegistration: AppRegistration | undefined;

  constructor(
    private readonly deps: {
      logger: Logger;
      clock: EngineClock;
      events: EventStore;
      registry: FunctionRegistry;
      app: AppClient;
      onFunctionsChanged: () => Promise<void>;
      /** Default `out-of-band`, the dev server's way. */
      kind?: SyncKind;
      /** Requests are signed (self-hosted Inngest's `x-inngest-server-kind: cloud`). */
      signed?: boolean;
    },
  ) {}

  async sync(appUrl: string, kind: SyncKind = this.deps.kind ?? "out-of-band"): Promise<AppRegistration> {
    return kind === "in-band" ? this.syncInBand(appUrl) : this.syncOutOfBand(appUrl);
  }

  /** The dev server's sync: the app registers itself through POST /fn/register while we wait. */
  private async syncOutOfBand(appUrl: string): Promise<AppRegistration> {
    const before = this.registrations;
    const response = await this.deps.app.request(
      "PUT",
      appUrl,
      { url: appUrl },
      { "x-inngest-server-kind": this.deps.signed ? "cloud" : "dev" },
    );
    if (response.status !== 200) {
      // The SDK passes on our /fn/register refusal as `{message}`: name it, unescaped.
      let message = response.body.slice(0, 300);
      try {
        const reply = JSON.parse(response.body) as { message?: unknown };
        if (typeof reply.message === "string") message = reply.message;
      } catch {
        // not JSON: the raw body, shortened
      }
      throw new AppError(
        "upstream_unavailable",
        `Syncing ${appUrl} failed: HTTP ${response.status} ${message}`,
      );
    }
    if (this.registrations === before) {
      throw new AppError(
        "upstream_unavailable",
        `Syncing ${appUrl}: the app answered but did not register here (is its Inngest base URL this engine?)`,
      );
    }
    return this.lastRegistration ?? { url: appUrl, appId: "", functions: [] };
  }

  /** In-band sync: `PUT <serve url>` with `x-inngest-sync-kind: in_band`; the reply is the config. */
  private async syncInBand(appUrl: string): Promise<AppRegistration> {
    const response = await this.deps.app.request(
      "PUT",
      appUrl,
      { url: appUrl },
      {
        "x-inngest-sync-kind": "in_band",
        "x-inngest-server-kind": this.deps.signed ? "cloud" : "dev",
      },
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
    this.registrations++;
    this.lastRegistration = registration;
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
