import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Database } from "../db/client";
import { AppError } from "../errors";
import { isLifecycleEventName, lifecycleEvents } from "../events/lifecycle";
import { parseDurationMs } from "../shared/duration";
import { checkEndpointUrl, type EndpointUrlRules } from "./address-guard";
import type { SecretBox } from "./secret-box";
import { newEndpointSecret } from "./signing";

/** An endpoint as the admin API and the console show it: never its secrets. */
export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptView {
  startedAt: string;
  finishedAt: string | null;
  ok: boolean | null;
  statusCode: number | null;
  responseExcerpt: string | null;
  error: string | null;
  /** "scheduled" (the retries) or "send-again". */
  kind: "scheduled" | "send-again";
}

export interface DeliveryView {
  id: string;
  /** The webhook-id header of every attempt of this delivery. */
  webhookId: string;
  endpointId: string;
  eventId: string;
  eventName: string;
  orderId: string | null;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastResponse: string | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
  attemptLog: AttemptView[];
}

const eventTypes = z
  .array(z.string().max(100))
  .min(1, "name at least one event type")
  .max(Object.keys(lifecycleEvents).length)
  .superRefine((names, ctx) => {
    const unknown = names.filter((name) => !isLifecycleEventName(name));
    if (unknown.length > 0)
      ctx.addIssue({
        code: "custom",
        message: `unknown event type ${unknown.map((name) => JSON.stringify(name)).join(", ")}; known: ${Object.keys(lifecycleEvents).join(", ")}`,
      });
  })
  .transform((names) => [...new Set(names)]);

const description = z.string().max(500);

export const createEndpointBody = z
  .object({
    url: z.string().min(1).max(2048),
    eventTypes,
    description: description.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();

export const updateEndpointBody = z
  .object({
    url: z.string().min(1).max(2048).optional(),
    eventTypes: eventTypes.optional(),
    description: description.nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .refine(
    (body) => Object.keys(body).length > 0,
    "change at least one of url, eventTypes, description, enabled",
  );

export const rotateSecretBody = z
  .object({
    // How long the previous secret keeps signing beside the new one; "0s" ends it at once.
    overlap: z
      .string()
      .refine((value) => parseDurationMs(value) !== undefined, 'must be a duration such as "24h"')
      .refine((value) => (parseDurationMs(value) ?? 0) <= 30 * 86_400_000, "must be at most 30d")
      .optional(),
  })
  .strict();

const problems = (error: z.ZodError) =>
  error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ");

/** Parses a body with a schema, or a 400 saying every problem. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw new AppError("validation_failed", problems(parsed.error));
  return parsed.data;
}

const uuid = z.uuid();
const iso = (date: Date | null) => (date ? date.toISOString() : null);

type EndpointRow = Awaited<ReturnType<Database["webhookEndpoint"]["findUniqueOrThrow"]>>;

function endpointView(row: EndpointRow): EndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    failingSince: iso(row.failingSince),
    previousSecretExpiresAt:
      row.previousSecretExpiresAt && row.previousSecretExpiresAt.getTime() > Date.now()
        ? row.previousSecretExpiresAt.toISOString()
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export interface EndpointSettings extends EndpointUrlRules {
  secretOverlapMs: number;
}

/**
 * The endpoints' use cases, for the admin API and the console: every check done before anything
 * is written, so a refused request changes nothing.
 */
export function createWebhookEndpoints(deps: {
  db: Database;
  settings: EndpointSettings;
  /** Seals the signing secrets before they are written, opens them when moved (decision 0205). */
  secrets: SecretBox;
  /** Starts one more attempt of a delivery ("send again"); resolves once Inngest took it. */
  requestResend: (deliveryId: string, endpointId: string, resend: number) => Promise<void>;
}) {
  const { db, settings, secrets } = deps;

  async function find(id: string): Promise<EndpointRow> {
    const row = uuid.safeParse(id).success ? await db.webhookEndpoint.findUnique({ where: { id } }) : null;
    if (!row) throw new AppError("not_found", `No webhook endpoint ${id}`);
    return row;
  }

  const deliveryInclude = { attemptLog: { orderBy: { id: "asc" as const } } };
  type DeliveryRow = Awaited<
    ReturnType<
      typeof db.webhookDelivery.findUniqueOrThrow<{ where: { id: string }; include: typeof deliveryInclude }>
    >
  >;
  const deliveryView = (row: DeliveryRow): DeliveryView => ({
    id: row.id,
    webhookId: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventName: row.eventName,
    orderId: row.orderId,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastResponse: row.lastResponse,
    lastError: row.lastError,
    nextAttemptAt: iso(row.nextAttemptAt),
    deliveredAt: iso(row.deliveredAt),
    createdAt: row.createdAt.toISOString(),
    attemptLog: row.attemptLog.map((attempt) => ({
      startedAt: attempt.startedAt.toISOString(),
      finishedAt: iso(attempt.finishedAt),
      ok: attempt.ok,
      statusCode: attempt.statusCode,
      responseExcerpt: attempt.responseExcerpt,
      error: attempt.error,
      kind: attempt.attemptKey.includes(":again-") ? "send-again" : "scheduled",
    })),
  });

  return {
    /** Creates an endpoint; the answer is the only time its secret is shown. */
    async create(body: unknown): Promise<EndpointView & { secret: string }> {
      const input = parseBody(createEndpointBody, body);
      const url = await checkEndpointUrl(input.url, settings);
      const secret = newEndpointSecret();
      // The id is ours, not the database's: the sealed secret is bound to it.
      const id = randomUUID();
      const row = await db.webhookEndpoint.create({
        data: {
          id,
          url: url.toString(),
          eventTypes: input.eventTypes,
          description: input.description ?? null,
          enabled: input.enabled ?? true,
          disabledReason: input.enabled === false ? "created disabled" : null,
          secret: secrets.seal(secret, id),
        },
      });
      return { ...endpointView(row), secret };
    },

    async list(): Promise<EndpointView[]> {
      const rows = await db.webhookEndpoint.findMany({ orderBy: { createdAt: "asc" } });
      return rows.map(endpointView);
    },

    async get(id: string): Promise<EndpointView> {
      return endpointView(await find(id));
    },

    /** `via` names who disabled it, in its disabledReason (the admin API unless said). */
    async update(id: string, body: unknown, options: { via?: string } = {}): Promise<EndpointView> {
      const input = parseBody(updateEndpointBody, body);
      const current = await find(id);
      const url =
        input.url !== undefined ? (await checkEndpointUrl(input.url, settings)).toString() : undefined;
      const enabling = input.enabled === true && !current.enabled;
      const row = await db.webhookEndpoint.update({
        where: { id: current.id },
        data: {
          ...(url !== undefined ? { url } : {}),
          ...(input.eventTypes !== undefined ? { eventTypes: input.eventTypes } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.enabled === false && current.enabled
            ? { enabled: false, disabledReason: `disabled through ${options.via ?? "the admin API"}` }
            : {}),
          // Enabled again: its failing streak starts over, so it is not disabled by its next failure.
          ...(enabling ? { enabled: true, disabledReason: null, failingSince: null } : {}),
        },
      });
      return endpointView(row);
    },

    /**
     * A new secret, shown once; the previous one keeps signing beside it for the overlap
     * (WEBHOOK_SECRET_OVERLAP, or the body's), so the receiver can switch without losing a delivery.
     */
    async rotateSecret(id: string, body: unknown): Promise<EndpointView & { secret: string }> {
      const input = parseBody(rotateSecretBody, body);
      const current = await find(id);
      const overlapMs =
        input.overlap !== undefined ? (parseDurationMs(input.overlap) ?? 0) : settings.secretOverlapMs;
      const secret = newEndpointSecret();
      const row = await db.webhookEndpoint.update({
        where: { id: current.id },
        data:
          overlapMs > 0
            ? {
                secret: secrets.seal(secret, current.id),
                // A row from before encryption carries its secret in clear: sealed as it moves.
                previousSecret: secrets.isSealed(current.secret)
                  ? current.secret
                  : secrets.seal(current.secret, current.id),
                previousSecretExpiresAt: new Date(Date.now() + overlapMs),
              }
            : {
                secret: secrets.seal(secret, current.id),
                previousSecret: null,
                previousSecretExpiresAt: null,
              },
      });
      return { ...endpointView(row), secret };
    },

    /**
     * The migration path of decision 0205: rows written before the secrets were encrypted keep
     * working (SecretBox#open passes a clear value through) and are sealed here, at start-up.
     * Compare-and-set on the value read, so a rotation in between is never overwritten.
     * Returns how many rows it sealed.
     */
    async sealStoredSecrets(): Promise<number> {
      const rows = await db.webhookEndpoint.findMany({
        where: {
          OR: [
            { NOT: { secret: { startsWith: "enc:" } } },
            { AND: [{ previousSecret: { not: null } }, { NOT: { previousSecret: { startsWith: "enc:" } } }] },
          ],
        },
        select: { id: true, secret: true, previousSecret: true },
      });
      let sealed = 0;
      for (const row of rows) {
        const seal = (value: string) => (secrets.isSealed(value) ? value : secrets.seal(value, row.id));
        const { count } = await db.webhookEndpoint.updateMany({
          where: { id: row.id, secret: row.secret, previousSecret: row.previousSecret },
          data: {
            secret: seal(row.secret),
            previousSecret: row.previousSecret === null ? null : seal(row.previousSecret),
          },
        });
        sealed += count;
      }
      return sealed;
    },

    async remove(id: string): Promise<void> {
      const current = await find(id);
      await db.webhookEndpoint.delete({ where: { id: current.id } });
    },

    /** An endpoint's deliveries, newest first, each with its attempts (the delivery log). */
    async deliveries(endpointId: string, options: { limit?: number } = {}): Promise<DeliveryView[]> {
      const endpoint = await find(endpointId);
      const rows = await db.webhookDelivery.findMany({
        where: { endpointId: endpoint.id },
        orderBy: [{ createdAt: "desc" }, { id: "asc" }],
        take: Math.min(Math.max(options.limit ?? 50, 1), 200),
        include: deliveryInclude,
      });
      return rows.map(deliveryView);
    },

    async delivery(id: string): Promise<DeliveryView> {
      const row = uuid.safeParse(id).success
        ? await db.webhookDelivery.findUnique({ where: { id }, include: deliveryInclude })
        : null;
      if (!row) throw new AppError("not_found", `No webhook delivery ${id}`);
      return deliveryView(row);
    },

    /**
     * "Send again": one more attempt of a delivery, with the same webhook-id (the receiver sees a
     * repeat of one message, not a new one), whatever its status. Each request takes the next
     * number, which names its event and its attempt: a double click is two attempts, a retried
     * request to Inngest one.
     */
    async sendAgain(id: string): Promise<{ deliveryId: string; webhookId: string; resend: number }> {
      const delivery = uuid.safeParse(id).success
        ? await db.webhookDelivery.findUnique({ where: { id }, include: { endpoint: true } })
        : null;
      if (!delivery) throw new AppError("not_found", `No webhook delivery ${id}`);
      if (!delivery.endpoint.enabled)
        throw new AppError("conflict", "The endpoint is disabled: enable it before sending again");
      const { resends } = await db.webhookDelivery.update({
        where: { id: delivery.id },
        data: { resends: { increment: 1 } },
        select: { resends: true },
      });
      await deps.requestResend(delivery.id, delivery.endpointId, resends);
      return { deliveryId: delivery.id, webhookId: delivery.id, resend: resends };
    },
  };
}

export type WebhookEndpoints = ReturnType<typeof createWebhookEndpoints>;
