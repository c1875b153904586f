import type pg from "pg";
import type { Alerter } from "../alerts";
import { sqlPool, type Database } from "../db/client";
import type { Logger } from "../logger";
import type { Resolver } from "./address-guard";
import { postDelivery, type PostOutcome } from "./post";
import type { SecretBox } from "./secret-box";
import { signedHeaders, signingSecrets } from "./signing";

/** What one attempt step returns (kept small: Inngest stores it). */
export interface AttemptResult {
  /** delivered: 2xx; failed: anything else; stopped: the endpoint is disabled or gone. */
  outcome: "delivered" | "failed" | "stopped";
  statusCode?: number;
}

export interface DeliverySettings {
  blockPrivate: boolean;
  timeoutMs: number;
  disableAfterMs: number;
  resolve?: Resolver;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  status: string;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  name: string;
  data: Record<string, unknown>;
  created_at: Date;
}

interface AttemptRow {
  ok: boolean | null;
  status_code: number | null;
  finished_at: Date | null;
}

/**
 * One attempt of one delivery: sign, POST, record. Idempotent by its attempt key
 * (`<delivery>:<n>` for the n-th scheduled attempt, `<delivery>:again-<n>` for the n-th "send
 * again"): a step re-run after its attempt was recorded returns the record and sends nothing; one
 * re-run after a crash between the POST and the record sends again with the same webhook-id, which
 * is what receivers deduplicate by (at-least-once, as the specification says).
 */
export function createWebhookDelivery(deps: {
  db: Database;
  settings: DeliverySettings;
  /** Opens the endpoint's sealed signing secrets just before signing (decision 0205). */
  secrets: SecretBox;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  /** The endpoints page of the ops console, for the alert. */
  endpointUrl?: (endpointId: string) => string;
}) {
  const pool = sqlPool(deps.db);
  const { settings } = deps;

  async function load(deliveryId: string): Promise<DeliveryRow | undefined> {
    const { rows } = await pool.query<DeliveryRow>(
      `SELECT d.id, d.endpoint_id, d.status, e.url, e.enabled, e.secret, e.previous_secret,
              e.previous_secret_expires_at, o.name, o.data, o.created_at
       FROM webhook_deliveries d
       JOIN webhook_endpoints e ON e.id = d.endpoint_id
       JOIN lifecycle_outbox o ON o.event_id = d.event_id
       WHERE d.id = $1`,
      [deliveryId],
    );
    return rows[0];
  }

  /** Records the outcome on the attempt, the delivery and the endpoint in one transaction. */
  async function record(
    row: DeliveryRow,
    attemptKey: string,
    outcome: PostOutcome,
    options: { scheduled: boolean; nextDelayMs: number | null },
  ): Promise<{ disabled?: { failingSince: Date } }> {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        `UPDATE webhook_attempts SET finished_at = now(), ok = $2, status_code = $3,
           response_excerpt = $4, error = $5 WHERE attempt_key = $1`,
        [attemptKey, outcome.ok, outcome.statusCode ?? null, outcome.excerpt ?? null, outcome.error ?? null],
      );
      await client.query(
        `UPDATE webhook_deliveries SET attempts = attempts + 1, last_status_code = $2, last_response = $3,
           last_error = $4, updated_at = now(),
           status = CASE WHEN $5 THEN 'delivered'
                         WHEN status = 'pending' AND $6 AND $7::bigint IS NULL THEN 'failed'
                         ELSE status END,
           delivered_at = CASE WHEN $5 THEN coalesce(delivered_at, now()) ELSE delivered_at END,
           next_attempt_at = CASE WHEN $5 OR NOT $6 THEN next_attempt_at
                                  WHEN $7::bigint IS NULL THEN NULL
                                  ELSE now() + $7::bigint * interval '1 millisecond' END
         WHERE id = $1`,
        [
          row.id,
          outcome.statusCode ?? null,
          outcome.excerpt ?? null,
          outcome.error ?? (outcome.ok ? null : `answered ${outcome.statusCode}`),
          outcome.ok,
          options.scheduled,
          options.nextDelayMs,
        ],
      );
      const disabled = outcome.ok
        ? await markSucceeded(client, row.endpoint_id)
        : await markFailed(client, row.endpoint_id);
      await client.query("COMMIT");
      return disabled ? { disabled } : {};
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async function markSucceeded(client: pg.PoolClient, endpointId: string): Promise<undefined> {
    await client.query(
      `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`,
      [endpointId],
    );
    return undefined;
  }

  /**
   * The endpoint's failing streak starts at its first failure since its last success; once it is
   * WEBHOOK_DISABLE_AFTER old, this failure disables it. Only the update that flips `enabled`
   * returns a row, so ops are told once however many deliveries fail at the same moment.
   */
  async function markFailed(
    client: pg.PoolClient,
    endpointId: string,
  ): Promise<{ failingSince: Date } | undefined> {
    await client.query(
      `UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1 AND failing_since IS NULL`,
      [endpointId],
    );
    const { rows } = await client.query<{ failing_since: Date }>(
      `UPDATE webhook_endpoints
         SET enabled = false, updated_at = now(),
             disabled_reason = 'every attempt failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
       WHERE id = $1 AND enabled AND failing_since <= now() - $2::bigint * interval '1 millisecond'
       RETURNING failing_since`,
      [endpointId, settings.disableAfterMs],
    );
    return rows[0] ? { failingSince: rows[0].failing_since } : undefined;
  }

  return {
    async attempt(
      deliveryId: string,
      options: { attemptKey: string; scheduled: boolean; nextDelayMs: number | null },
    ): Promise<AttemptResult> {
      const done = await pool.query<AttemptRow>(
        `SELECT ok, status_code, finished_at FROM webhook_attempts WHERE attempt_key = $1`,
        [options.attemptKey],
      );
      const recorded = done.rows[0];
      if (recorded?.finished_at)
        return {
          outcome: recorded.ok ? "delivered" : "failed",
          ...(recorded.status_code !== null ? { statusCode: recorded.status_code } : {}),
        };

      const row = await load(deliveryId);
      if (!row) return { outcome: "stopped" };
      // Delivered already (by "send again" while retries were pending): the schedule stops.
      if (options.scheduled && row.status === "delivered") return { outcome: "delivered" };
      if (!row.enabled) {
        await pool.query(
          `UPDATE webhook_deliveries SET status = 'skipped', next_attempt_at = NULL, updated_at = now()
           WHERE id = $1 AND status = 'pending'`,
          [deliveryId],
        );
        return { outcome: "stopped" };
      }

      // Opened before the attempt is written: a key that cannot open them fails the step (an error
      // naming WEBHOOK_SECRETS_KEY) without leaving an attempt that never finished in the log.
      // Real time, not the engine's: the receiver checks the timestamp against its own clock.
      const now = new Date();
      const secrets = signingSecrets(
        {
          secret: deps.secrets.open(row.secret, row.endpoint_id),
          previousSecret:
            row.previous_secret === null ? null : deps.secrets.open(row.previous_secret, row.endpoint_id),
          previousSecretExpiresAt: row.previous_secret_expires_at,
        },
        now,
      );
      await pool.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt_key) VALUES ($1, $2) ON CONFLICT (attempt_key) DO NOTHING`,
        [deliveryId, options.attemptKey],
      );
      // The Standard Webhooks payload: the event's type, when it happened, and its data.
      const occurredAt =
        typeof row.data.occurredAt === "string" ? row.data.occurredAt : row.created_at.toISOString();
      const body = JSON.stringify({ type: row.name, timestamp: occurredAt, data: row.data });
      const outcome = await postDelivery({
        url: row.url,
        headers: signedHeaders(secrets, deliveryId, now, body),
        body,
        timeoutMs: settings.timeoutMs,
        blockPrivate: settings.blockPrivate,
        ...(settings.resolve ? { resolve: settings.resolve } : {}),
      });
      const { disabled } = await record(row, options.attemptKey, outcome, options);
      if (disabled) {
        deps.logger.warn({ endpointId: row.endpoint_id }, "webhook endpoint disabled after failing");
        await deps.alerts.notify({
          title: "Webhook endpoint disabled: every delivery failed",
          // Keyed by the endpoint (and the streak): told once per disabling.
          key: `webhook-endpoint-disabled-${row.endpoint_id}-${disabled.failingSince.getTime()}`,
          fields: {
            endpointId: row.endpoint_id,
            url: row.url,
            failingSince: disabled.failingSince.toISOString(),
            lastAnswer: outcome.error ?? `HTTP ${outcome.statusCode}`,
            ...(deps.endpointUrl ? { endpointPage: deps.endpointUrl(row.endpoint_id) } : {}),
            action:
              "Fix the receiver, then enable the endpoint again (the console's Webhooks page, or PATCH enabled: true)",
          },
        });
      }
      return outcome.ok
        ? { outcome: "delivered", statusCode: outcome.statusCode }
        : {
            outcome: "failed",
            ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
          };
    },
  };
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
