import { z } from "zod";
import { readFileSync } from "node:fs";
import { durationMs } from "./shared/duration";
import { rateTableSchema, type RateTable } from "./shipping/rate-table";

/**
 * The one place that reads process.env. Everything else receives a parsed, typed Config.
 * Outside production every integration has an embedded stand-in, so an empty environment is
 * valid; in production the stand-ins are forbidden and the real endpoints become required.
 */

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const duration = z.string().regex(/^\d+(ms|s|m|h|d|w)$/, 'must be a duration such as "30s", "1h" or "14d"');

const optionalUrl = z.url().optional();

/** A TCP port; says what was given and what to give instead (z.coerce would say "received NaN"). */
const port = (fallback: number) =>
  z
    .string()
    .regex(/^\d{1,5}$/, {
      error: (issue) =>
        `must be a port number from 0 to 65535, such as ${fallback} (got ${JSON.stringify(issue.input)})`,
    })
    .transform(Number)
    .refine((value) => value <= 65535, `must be a port number from 0 to 65535, such as ${fallback}`)
    .default(fallback);

const emptyAsUndefined = (value: unknown): unknown => (value === "" ? undefined : value);

const schema = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  PORT: port(3000),
  // Default: all interfaces in production (containers), loopback elsewhere (a laptop on café Wi-Fi).
  HOST: z.string().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  PUBLIC_URL: optionalUrl,
  DATA_DIR: z.string().default(".data"),

  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  // Connections per process, and how long a query waits for one before the request answers 503.
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(10),
  DATABASE_POOL_TIMEOUT: duration.default("5s"),

  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_/, "must start with sk_ or rk_")
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_/, "must start with whsec_")
    .optional(),
  STRIPE_API_BASE: optionalUrl,
  STRIPE_SANDBOX_PORT: port(12111),
  PAYMENT_CAPTURE: z.enum(["manual", "automatic"]).default("manual"),
  // A paid order some of whose lines find no stock at fulfilment: cancel it whole (the default, as
  // the customer agreed to the whole basket) or ship what is there and not charge (or refund) the
  // rest (docs/decisions/0105-partial-fulfilment-is-opt-in.md).
  PARTIAL_FULFILMENT: z.enum(["cancel_order", "ship_available"]).default("cancel_order"),
  // How long a Checkout Session can be paid, and so how long its stock is held (Stripe: 30m to 24h).
  CHECKOUT_SESSION_TTL: duration.default("1h"),

  INNGEST_DEV: z.string().optional(),
  INNGEST_BASE_URL: optionalUrl,
  INNGEST_EVENT_KEY: z.string().min(1).optional(),
  INNGEST_SIGNING_KEY: z
    .string()
    .regex(/^signkey-/, "must start with signkey-")
    .optional(),
  INNGEST_SIGNING_KEY_FALLBACK: z
    .string()
    .regex(/^signkey-/, "must start with signkey-")
    .optional(),
  // Customer data in events and step results reaches Inngest encrypted (src/inngest/encryption.ts);
  // the previous key only decrypts, for runs that started before a rotation.
  INNGEST_ENCRYPTION_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  INNGEST_ENCRYPTION_KEY_PREVIOUS: z.string().min(32, "must be at least 32 characters").optional(),
  INNGEST_SERVE_PATH: z.string().startsWith("/").default("/api/inngest"),
  // The origin Inngest is told to call (the SDK's own variable name): where the Inngest server
  // reaches us when that is neither PUBLIC_URL nor the address it connects to (a container name).
  INNGEST_SERVE_ORIGIN: optionalUrl,
  // Accept an unsigned out-of-band sync (`curl -X PUT <app>/api/inngest`) although a signing key is
  // set: it can only re-announce the pinned URL, without deployId, a few times a minute.
  INNGEST_ALLOW_UNSIGNED_SYNC: z.stringbool().default(false),
  // Where alerts and the ops console link a run; unset: the ops console's run page with the local
  // engine, the dev server's run view with INNGEST_DEV, the Inngest dashboard in production.
  INNGEST_RUN_URL_TEMPLATE: z.string().includes("{runId}", 'must contain "{runId}"').optional(),
  LOCAL_ENGINE_PORT: port(8288),
  LOCAL_ENGINE_TIME_SCALE: z.coerce.number().positive().default(1),
  // The local engine checkpoints like Inngest by default; false selects the classic path.
  LOCAL_ENGINE_CHECKPOINTING: z.stringbool().default(true),
  // How the local engine syncs the app: as the Inngest dev server does (default), or as Inngest Cloud.
  LOCAL_ENGINE_SYNC: z.enum(["out-of-band", "in-band"]).default("out-of-band"),

  CANCEL_WINDOW: duration.default("1h"),
  REVIEW_DELAY: duration.default("14d"),
  REVIEW_AFTER_DELIVERY: duration.default("3d"),
  // The shop's IANA time zone: the daily reconciliation reconciles a calendar day there.
  SHOP_TIME_ZONE: z
    .string()
    .refine(isTimeZone, "must be an IANA time zone such as Europe/Paris or UTC")
    .default("UTC"),
  // A paid order not shipped this long after it was placed is a reconciliation mismatch.
  RECONCILIATION_SHIP_WITHIN: duration.default("2d"),
  // The wait between payment and buying the label, in which a cancel buys no label at all
  // (docs/holds-and-labels.md). Unset: 30m in production (most cancels come in the first minutes,
  // and half an hour rarely misses a same-day pickup), 0s otherwise (a developer's order ships at once).
  FULFILMENT_HOLD: duration.optional(),
  // How often a submitted label refund is asked about, over the carrier's 30 days.
  LABEL_REFUND_CHECK_EVERY: duration.default("1d"),
  // Returns (docs/returns.md): how long after delivery a customer may ask for one; what is kept of
  // the refund ("10%" of the returned lines, or a fixed amount in minor units such as "500");
  // whether a customer's request needs ops' approval before its label is bought; how long the
  // return label waits for the parcel before it is handed back and the return cancelled.
  RETURN_WINDOW: duration.default("30d"),
  RETURN_RESTOCKING_FEE: z
    .string()
    .regex(
      /^(\d{1,2}(\.\d{1,2})?%|100%|\d{1,9})$/,
      'must be a percentage such as "10%" or an amount in minor units (cents) such as "500" for 5.00',
    )
    .default("0"),
  RETURN_APPROVAL: z.enum(["auto", "ops"]).default("auto"),
  RETURN_SHIP_WITHIN: duration.default("30d"),
  // An exchange's new item ships once the return is back (on_receipt), or at once (at_once: the
  // shop trusts its customers with the item before the return arrives).
  EXCHANGE_SHIPS: z.enum(["on_receipt", "at_once"]).default("on_receipt"),
  // How long a customer has to pay a dearer exchange's difference on Stripe's Checkout page when
  // the bank refused it off-session (authentication_required). Stripe keeps a session payable
  // 30 minutes to 24 hours, so the window is kept within that (docs/decisions/0150).
  EXCHANGE_PAYMENT_WINDOW: duration
    .refine((value) => durationMs(value) >= 31 * 60_000, "must be at least 31m")
    .refine((value) => durationMs(value) <= 23 * 3600_000, "must be at most 23h")
    .default("23h"),

  // The shop as its customers know it (docs/branding.md): on every customer page, e-mail and the
  // ops console's title. The defaults read well until a shop sets its own.
  SHOP_NAME: z.string().trim().min(1).max(80, "must be at most 80 characters").default("Online shop"),
  SHOP_LOGO_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL of an image" }).optional(),
  SHOP_ACCENT_COLOR: z
    .string()
    .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour such as "#635bff"')
    .default("#635bff"),
  SHOP_SUPPORT_EMAIL: z.email("must be an e-mail address such as help@shop.example").optional(),
  SHOP_SUPPORT_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  // The legal line under every page and e-mail (company name, registered address, VAT number).
  SHOP_FOOTER: z.string().max(500, "must be at most 500 characters").optional(),

  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
    .optional(),
  // Unset: the shop's name at orders@shop.example (a development address; set it to go live).
  EMAIL_FROM: z.string().optional(),
  // How long the outbox keeps retrying an e-mail the mail server did not take; then ops are alerted.
  EMAIL_RETRY_FOR: duration.default("3d"),
  SLACK_WEBHOOK_URL: optionalUrl,
  // Alerts of one kind raised within this window of the first go to Slack as one message ("0s": each at once).
  ALERT_GROUP_WINDOW: duration.default("2m"),
  // The ops console shows a banner once an alert has failed to reach Slack for this long.
  ALERT_BANNER_AFTER: duration.default("10m"),
  // Outbound webhooks (docs/webhooks.md). The delays before each retry of a delivery, comma-separated:
  // the default (Standard Webhooks' schedule) is 8 attempts over about 27.5 hours.
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(
      /^\d+(ms|s|m|h|d|w)(,\d+(ms|s|m|h|d|w))*$/,
      'must be durations separated by commas, e.g. "5s,5m,30m"',
    )
    .default("5s,5m,30m,2h,5h,10h,10h"),
  // An endpoint whose attempts have all failed for this long is disabled, and ops told once.
  WEBHOOK_DISABLE_AFTER: duration.default("3d"),
  // After a secret rotation, how long the previous secret still signs beside the new one.
  WEBHOOK_SECRET_OVERLAP: duration.default("24h"),
  // How long one attempt waits for the endpoint's answer.
  WEBHOOK_TIMEOUT: duration.default("15s"),
  // Refuse endpoints that resolve to loopback, private, link-local or unspecified addresses (SSRF).
  // Unset: on in production, off elsewhere (so a laptop can deliver to 127.0.0.1).
  WEBHOOK_BLOCK_PRIVATE_ADDRESSES: z.stringbool().optional(),
  // Refuse endpoint URLs that are not https. Unset: on in production, off elsewhere.
  WEBHOOK_REQUIRE_HTTPS: z.stringbool().optional(),
  // Encrypts the endpoints' signing secrets in the database (AES-256-GCM, decision 0205); unset
  // outside production: derived from the admin token.
  WEBHOOK_SECRETS_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  ADMIN_API_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  // Signs the links in customer pages and e-mails (docs/pages.md); unset outside production: derived from the admin token.
  LINK_SIGNING_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  // How long a customer link stays good; long enough for the review e-mail weeks after delivery.
  LINK_TTL: duration
    .refine((value) => durationMs(value) >= 24 * 60 * 60 * 1000, "must be at least 1d")
    .default("90d"),
  ADMIN_RATE_LIMIT: z.coerce.number().int().positive().default(60),
  // Proxies whose X-Forwarded-For names the client (Express "trust proxy"): a hop count, or
  // addresses/subnets such as "loopback, 10.0.0.0/8". Unset: the socket address is the client.
  TRUST_PROXY: z
    .string()
    .regex(/^(\d+|[0-9A-Za-z.:/]+(\s*,\s*[0-9A-Za-z.:/]+)*)$/, "must be a hop count or a list of addresses")
    .refine(
      (value) => !/^(true|false)$/i.test(value),
      "must be a hop count or a list of addresses, not true/false",
    )
    .optional(),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  // POST /api/checkout takes a customer id and e-mail from its caller: only the shop's backend,
  // sending `Authorization: Bearer <token>`, may (docs/checkout.md). Required in production.
  CHECKOUT_API_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),

  // Shipping (docs/shipping.md). Outside production an EasyPost stand-in starts when no key is set.
  SHIPPING_COUNTRIES: z
    .string()
    .regex(/^[A-Z]{2}(,[A-Z]{2})*$/, "must be ISO 3166-1 alpha-2 codes separated by commas, e.g. US,CA")
    .default("US"),
  SHIPPING_COLLECT_PHONE: z.stringbool().default(true),
  // One carrier: EasyPost (its stand-in runs when EASYPOST_API_KEY is unset). Kept as a variable so a
  // leftover value from an older setup fails fast instead of being ignored.
  SHIPPING_CARRIER: z
    .enum(["easypost"], {
      error: "must be easypost (the EasyPost stand-in runs when EASYPOST_API_KEY is unset)",
    })
    .default("easypost"),
  SHIPPING_SERVICE_LEVEL: z
    .string()
    .regex(/^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$/, "must be EasyPost service names separated by commas")
    .default("GroundAdvantage,Ground,FEDEX_GROUND"),
  SHIPPING_ITEM_WEIGHT_OZ: z.coerce.number().positive().default(16),
  // The heaviest parcel, in ounces: an order over it ships in several (src/shipping/parcel-plan.ts).
  // Unset: no limit, one parcel per order (plus one per unit of a product that ships alone).
  SHIPPING_MAX_PARCEL_WEIGHT_OZ: z.coerce.number().positive().optional(),
  // The box parcels ship in, "length x width x height" in inches, e.g. 12x9x4; unset: weight only.
  SHIPPING_BOX_IN: z
    .string()
    .regex(/^\d+(\.\d+)?x\d+(\.\d+)?x\d+(\.\d+)?$/, "must be length x width x height in inches, e.g. 12x9x4")
    .transform((value) => value.split("x").map(Number) as [number, number, number])
    .optional(),
  // The shop's shipping rate table (src/shipping/rate-table.ts), as JSON or the path of a JSON file.
  // Set: POST /api/checkout needs a destination and offers the table's rates as shipping options.
  SHIPPING_RATE_TABLE: z
    .string()
    .min(1)
    .transform((value, ctx): RateTable => {
      let text = value;
      if (!value.trimStart().startsWith("{")) {
        try {
          text = readFileSync(value, "utf8");
        } catch (error) {
          ctx.addIssue({ code: "custom", message: `cannot read the file ${value}: ${String(error)}` });
          return z.NEVER;
        }
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be a rate table as JSON (or the path of one)" });
        return z.NEVER;
      }
      const table = rateTableSchema.safeParse(json);
      if (!table.success) {
        for (const issue of table.error.issues)
          ctx.addIssue({ code: "custom", message: `${issue.path.join(".") || "table"}: ${issue.message}` });
        return z.NEVER;
      }
      return table.data;
    })
    .optional(),
  // Live carrier rates at checkout (docs/checkout.md, decision 0203): with a destination, EasyPost's
  // rates for the order's parcels, the few the policy keeps (cheapest, fastest, in the order listed),
  // marked up by a percent and rounded up to a multiple of minor units. `off`: the rate table only.
  CHECKOUT_LIVE_RATES: z
    .string()
    .regex(
      /^(off|(cheapest|fastest)(,(cheapest|fastest))*)$/,
      "must be off, or cheapest and/or fastest separated by a comma (e.g. cheapest,fastest)",
    )
    .default("off"),
  CHECKOUT_LIVE_RATES_MARKUP_PERCENT: z.coerce.number().min(0).max(1000).default(0),
  CHECKOUT_LIVE_RATES_ROUND_UP_TO: z.coerce.number().int().min(1).max(100_000).default(1),
  // How long checkout waits for EasyPost's rates before offering the rate table instead.
  CHECKOUT_LIVE_RATES_TIMEOUT: duration.default("5s"),
  // Stripe Tax and discount codes at Checkout (docs/checkout.md, decision 0204). The values a
  // checkout used are stored with it (checkout_requests.pricing_terms): a retry or the checkout sweep
  // rebuilds the same Stripe request after these change.
  CHECKOUT_AUTOMATIC_TAX: z.stringbool().default(false),
  // Whether catalog prices (and shipping rates) include tax: Checkout's price_data.tax_behavior.
  CHECKOUT_TAX_BEHAVIOR: z.enum(["exclusive", "inclusive"]).default("exclusive"),
  // The shop's Stripe tax code for a product without its own (products.tax_code); unset, such a
  // product is refused at checkout while CHECKOUT_AUTOMATIC_TAX is on.
  CHECKOUT_DEFAULT_TAX_CODE: z
    .string()
    .regex(/^txcd_\d{8}$/, "must be a Stripe tax code such as txcd_99999999")
    .optional(),
  CHECKOUT_ALLOW_PROMOTION_CODES: z.stringbool().default(false),
  EASYPOST_API_KEY: z.string().min(1).optional(),
  EASYPOST_WEBHOOK_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  EASYPOST_API_BASE: optionalUrl,
  EASYPOST_SANDBOX_PORT: z.coerce.number().int().min(0).max(65535).default(12112),
  WAREHOUSE_NAME: z.string().min(1).optional(),
  WAREHOUSE_STREET1: z.string().min(1).optional(),
  WAREHOUSE_STREET2: z.string().min(1).optional(),
  WAREHOUSE_CITY: z.string().min(1).optional(),
  WAREHOUSE_STATE: z.string().min(1).optional(),
  WAREHOUSE_ZIP: z.string().min(1).optional(),
  WAREHOUSE_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, "must be an ISO 3166-1 alpha-2 code")
    .optional(),
  WAREHOUSE_PHONE: z.string().min(1).optional(),
});

type Env = z.infer<typeof schema>;

/** Every variable this service reads (for checks that deployment files name no other). */
export const configVariableNames: readonly string[] = Object.keys(schema.shape);

export type Config = Readonly<
  Omit<
    Env,
    "HOST" | "FULFILMENT_HOLD" | "EMAIL_FROM" | "WEBHOOK_BLOCK_PRIVATE_ADDRESSES" | "WEBHOOK_REQUIRE_HTTPS"
  > & {
    HOST: string;
    WEBHOOK_BLOCK_PRIVATE_ADDRESSES: boolean;
    WEBHOOK_REQUIRE_HTTPS: boolean;
    EMAIL_FROM: string;
    FULFILMENT_HOLD: string;
    isProduction: boolean;
    /** True when no DATABASE_URL is given: `npm start` runs an embedded PostgreSQL. */
    useEmbeddedDatabase: boolean;
  }
>;

/** Variables that must be set in production, where no embedded stand-in may start. */
const requiredInProduction = [
  // Where Inngest calls us (the serve origin is pinned to it) and the base of links in e-mails.
  "PUBLIC_URL",
  "DATABASE_URL",
  "STRIPE_SECRET_KEY",
  "STRIPE_WEBHOOK_SECRET",
  "INNGEST_SIGNING_KEY",
  "INNGEST_ENCRYPTION_KEY",
  "SMTP_URL",
  "SLACK_WEBHOOK_URL",
  "ADMIN_API_TOKEN",
  "LINK_SIGNING_SECRET",
  // Without it the endpoints' signing secrets would be sealed with a key anyone with the admin token could derive.
  "WEBHOOK_SECRETS_KEY",
  "EASYPOST_API_KEY",
  "EASYPOST_WEBHOOK_SECRET",
  "WAREHOUSE_NAME",
  "WAREHOUSE_STREET1",
  "WAREHOUSE_CITY",
  "WAREHOUSE_ZIP",
  "WAREHOUSE_COUNTRY",
  // /metrics names orders, e-mails and alerts; no scraper may read it without the token.
  "METRICS_TOKEN",
  "CHECKOUT_API_TOKEN",
] as const satisfies readonly (keyof Env)[];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const input = Object.fromEntries(Object.keys(schema.shape).map((key) => [key, emptyAsUndefined(env[key])]));
  const result = schema.safeParse(input);
  const problems: string[] = result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);

  if (result.success && result.data.NODE_ENV === "production") {
    const values = result.data;
    for (const name of requiredInProduction) {
      if (values[name] === undefined) problems.push(`${name}: required when NODE_ENV=production`);
    }
    if (values.INNGEST_EVENT_KEY === undefined && values.INNGEST_BASE_URL === undefined) {
      problems.push(
        "INNGEST_EVENT_KEY: required when NODE_ENV=production (or INNGEST_BASE_URL for self-hosted Inngest)",
      );
    }
    if (
      values.INNGEST_ENCRYPTION_KEY_PREVIOUS !== undefined &&
      values.INNGEST_ENCRYPTION_KEY_PREVIOUS === values.INNGEST_ENCRYPTION_KEY
    ) {
      problems.push("INNGEST_ENCRYPTION_KEY_PREVIOUS: must differ from INNGEST_ENCRYPTION_KEY");
    }
    if (values.INNGEST_DEV !== undefined) {
      problems.push("INNGEST_DEV: must not be set when NODE_ENV=production");
    }
    if (values.STRIPE_API_BASE !== undefined) {
      problems.push(
        "STRIPE_API_BASE: must not be set when NODE_ENV=production (it points Stripe at a stand-in)",
      );
    }
    if (values.EASYPOST_API_BASE !== undefined) {
      problems.push(
        "EASYPOST_API_BASE: must not be set when NODE_ENV=production (it points EasyPost at a stand-in)",
      );
    }
  }

  if (result.success) {
    const ttl = durationMs(result.data.CHECKOUT_SESSION_TTL);
    // Stripe takes expires_at 30 minutes to 24 hours after the session's creation, which comes a
    // moment (or, for a resumed checkout, minutes) after the hold starts: keep a 5-minute margin.
    if (ttl < 35 * 60_000 || ttl > 24 * 3600_000) {
      problems.push(
        "CHECKOUT_SESSION_TTL: must be from 35m to 24h (Stripe's expires_at limits, with a margin)",
      );
    }
  }

  if (!result.success || problems.length > 0) throw new ConfigError(problems);

  const values = result.data;
  return Object.freeze({
    ...values,
    HOST: values.HOST ?? (values.NODE_ENV === "production" ? "0.0.0.0" : "127.0.0.1"),
    FULFILMENT_HOLD: values.FULFILMENT_HOLD ?? (values.NODE_ENV === "production" ? "30m" : "0s"),
    // A quoted display name, so a shop name with a comma or a dot stays one address.
    EMAIL_FROM: values.EMAIL_FROM ?? `"${values.SHOP_NAME.replace(/["\\\r\n]/g, "")}" <orders@shop.example>`,
    WEBHOOK_BLOCK_PRIVATE_ADDRESSES:
      values.WEBHOOK_BLOCK_PRIVATE_ADDRESSES ?? values.NODE_ENV === "production",
    WEBHOOK_REQUIRE_HTTPS: values.WEBHOOK_REQUIRE_HTTPS ?? values.NODE_ENV === "production",
    isProduction: values.NODE_ENV === "production",
    useEmbeddedDatabase: values.DATABASE_URL === undefined,
  });
}

/**
 * The Inngest dev server's address when INNGEST_DEV selects dev mode: its value when it is a URL,
 * else (`1`, `true`) the address the SDK defaults to in dev mode. Undefined outside dev mode.
 */
export function inngestDevServerUrl(config: Pick<Config, "INNGEST_DEV">): string | undefined {
  const value = config.INNGEST_DEV;
  if (value === undefined || value === "0" || value === "false") return undefined;
  return /^https?:\/\//.test(value) ? value : "http://localhost:8288";
}

/** Reads the process environment once, at boot. */
export function loadConfig(): Config {
  return parseConfig(process.env);
}
