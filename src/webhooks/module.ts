import type { Inngest } from "inngest";
import type { Alerter } from "../alerts";
import type { Config } from "../config";
import type { Database } from "../db/client";
import { inngestUnavailable } from "../events/publisher";
import { webhookResendEvent } from "../events/webhook-contracts";
import type { Logger } from "../logger";
import { durationMs } from "../shared/duration";
import type { Resolver } from "./address-guard";
import { webhookAdminRoutes } from "./admin-routes";
import { createWebhookDelivery } from "./delivery";
import { webhookDeliveryEvents } from "./dispatch";
import { createWebhookEndpoints } from "./endpoints";
import { createSecretBox, deriveWebhookSecretsKey } from "./secret-box";

/**
 * Signed outbound webhooks (issue 40, docs/webhooks.md, decision 0198), composed in one place: the
 * endpoints' use cases and admin routes, the attempts deliver-webhook makes, and the lifecycle
 * outbox's companion that starts a run per delivery.
 */
export function createWebhooksModule(shared: {
  config: Config;
  db: Database;
  /** The app's client: "send again" starts deliver-webhook through it. */
  inngest: Pick<Inngest, "send">;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  adminToken: string;
  publicUrl: string;
  /** Tests resolve host names their own way; production asks the system resolver. */
  resolve?: Resolver;
}) {
  const { config, db } = shared;
  const blockPrivate = config.WEBHOOK_BLOCK_PRIVATE_ADDRESSES;
  const resolve = shared.resolve ? { resolve: shared.resolve } : {};
  // Production requires WEBHOOK_SECRETS_KEY (src/config.ts); elsewhere a key derived from the admin token.
  const secrets = createSecretBox(config.WEBHOOK_SECRETS_KEY ?? deriveWebhookSecretsKey(shared.adminToken));
  const endpoints = createWebhookEndpoints({
    db,
    secrets,
    settings: {
      requireHttps: config.WEBHOOK_REQUIRE_HTTPS,
      blockPrivate,
      secretOverlapMs: durationMs(config.WEBHOOK_SECRET_OVERLAP),
      ...resolve,
    },
    async requestResend(deliveryId, endpointId, resend) {
      try {
        await shared.inngest.send(webhookResendEvent(deliveryId, endpointId, resend));
      } catch (error) {
        throw inngestUnavailable("the webhook's send-again", error);
      }
    },
  });
  const delivery = createWebhookDelivery({
    db,
    secrets,
    settings: {
      blockPrivate,
      timeoutMs: durationMs(config.WEBHOOK_TIMEOUT),
      disableAfterMs: durationMs(config.WEBHOOK_DISABLE_AFTER),
      ...resolve,
    },
    alerts: shared.alerts,
    logger: shared.logger.child({ component: "webhooks" }),
    endpointUrl: (id) => `${shared.publicUrl.replace(/\/+$/, "")}/ops/webhooks#${id}`,
  });
  const logger = shared.logger.child({ component: "webhooks" });
  return {
    endpoints,
    delivery,
    /**
     * Rows from before decision 0205 hold their secret in clear: sealed at start. The app must still
     * start with the database away (it answers 503 until it is back), and a row in clear keeps
     * signing, so a failure here waits for the next start.
     */
    async sealStoredSecretsAtStart(): Promise<void> {
      try {
        const sealed = await endpoints.sealStoredSecrets();
        if (sealed > 0) logger.info({ sealed }, "webhook endpoint secrets encrypted at rest");
      } catch (error) {
        logger.warn({ err: error }, "webhook endpoint secrets not sealed yet; the next start tries again");
      }
    },
    /** deliver-webhook's dependencies (WorkflowDependencies.webhooks). */
    workflow: { delivery, retrySchedule: config.WEBHOOK_RETRY_SCHEDULE.split(",") },
    /** For createLifecycleEventsModule: the deliveries' events go with their lifecycle events. */
    outboxCompanions: webhookDeliveryEvents,
    admin: webhookAdminRoutes({ adminToken: shared.adminToken, endpoints }),
  };
}

export type WebhooksModule = ReturnType<typeof createWebhooksModule>;
