import { z } from "zod";

/**
 * The webhook admin API's answers as zod schemas: GET /openapi.json is built from them
 * (src/openapi/document.ts), and the tests hold real answers to it. The views are built in
 * src/webhooks/endpoints.ts.
 */
export const webhookEndpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    eventTypes: z.array(z.string()),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe(
        'Why it is disabled: "created disabled", "disabled through the admin API" (or "the ops console"), or since when every attempt failed',
      ),
    failingSince: z.iso.datetime().nullable(),
    previousSecretExpiresAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "WebhookEndpoint" });

export const webhookEndpointWithSecretSchema = webhookEndpointSchema
  .extend({
    secret: z
      .string()
      .regex(/^whsec_/)
      .describe(
        "Shown in this answer only; stored sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY (decision 0205)",
      ),
  })
  .meta({ id: "WebhookEndpointWithSecret" });

export const webhookEndpointListSchema = z.object({ endpoints: z.array(webhookEndpointSchema) });

export const webhookDeliverySchema = z
  .object({
    id: z.uuid(),
    webhookId: z.string().describe("The webhook-id header of every attempt, send-again included"),
    endpointId: z.uuid(),
    eventId: z.string(),
    eventName: z.string(),
    orderId: z.uuid().nullable(),
    status: z.enum(["pending", "delivered", "failed", "skipped"]),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastResponse: z.string().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
    deliveredAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    attemptLog: z.array(
      z.object({
        startedAt: z.iso.datetime(),
        finishedAt: z.iso.datetime().nullable(),
        ok: z.boolean().nullable(),
        statusCode: z.number().int().nullable(),
        responseExcerpt: z.string().nullable(),
        error: z.string().nullable(),
        kind: z.enum(["scheduled", "send-again"]),
      }),
    ),
  })
  .meta({ id: "WebhookDelivery" });

export const webhookDeliveryListSchema = z.object({ deliveries: z.array(webhookDeliverySchema) });

export const webhookSendAgainSchema = z.object({
  deliveryId: z.uuid(),
  webhookId: z.string(),
  resend: z.number().int().positive(),
});
