import { randomUUID } from "node:crypto";
import { sqlPool, type Database } from "../db/client";
import { orderLinesJsonSql, type OrderLineJson } from "../db/order-lines-sql";
import type { OrderStatus } from "../generated/prisma/enums";
import type { Logger } from "../logger";
import type { TimelineKind } from "../timeline/kinds";
import { createTimeline } from "../timeline/timeline";
import type { EmailTransport } from "./email-transport";
import { messageIdFor } from "./message-id";
import type { EmailContent, EmailTemplateName } from "./templates";

export interface SendEmailRequest {
  /** shipped-<orderId>, review-<orderId>, payment-failed-<orderId>, out-of-stock-<orderId>, cancelled-<orderId> */
  idempotencyKey: string;
  orderId?: string;
  template: EmailTemplateName;
  to: string;
  content: EmailContent;
}

/**
 * `queued`: the mail server could not take it now (or another attempt holds it); the outbox
 * (`drain`, run by a cron) sends it later. `undeliverable`: retried for EMAIL_RETRY_FOR, given up,
 * ops alerted.
 */
export type SendEmailResult = {
  status: "sent" | "already-sent" | "queued" | "undeliverable";
  messageId: string;
};

/** The order an e-mail is about, as read in its claim's statement. */
export interface OrderForEmail {
  id: string;
  email: string;
  currency: string;
  total: number;
  lines: OrderLineJson[];
  /** Stripe's money breakdown (orders.money_breakdown), when recorded: the e-mails show it. */
  moneyBreakdown?: unknown;
}

/**
 * An order's timeline entry written with the e-mail's outcome, in the statement that records it
 * (`sent`, `failed`), once per (order, kind, run) as every entry: the step that sends the e-mail
 * then writes no entry of its own.
 */
export interface OutcomeEntry {
  kind: TimelineKind;
  runId: string;
  detail(outcome: SendEmailResult & { idempotencyKey: string }): Record<string, unknown>;
}

/**
 * An e-mail to an order's customer, rendered from the order read in the claim's own statement:
 * the recipient is the order's e-mail, and `render` runs once the e-mail is leased, unless an
 * earlier attempt already stored the rendered message (the first render wins).
 */
export interface OrderEmailRequest {
  idempotencyKey: string;
  orderId: string;
  template: EmailTemplateName;
  render(order: OrderForEmail): EmailContent;
  entry?: OutcomeEntry;
  /** The order's move written with the outcome, in the same statement as `entry`. */
  move?: OrderMove;
}

/**
 * An order's status change that rides in the statement recording its e-mail's outcome (`sent` or
 * `failed`), or in one of its own with the entry when the outcome was someone else's (`already-sent`,
 * held): the order moves whatever became of the e-mail, as a transition after it would.
 */
export interface OrderMove {
  from: readonly OrderStatus[];
  to: OrderStatus;
  /** Told once, by the statement that moved the order (the transitions' metrics). */
  onMoved?(): void;
}

export interface EmailSender {
  send(request: SendEmailRequest): Promise<SendEmailResult>;
  /** One statement fewer per e-mail than reading the order and then send() (docs/benchmarks.md). */
  sendToOrder(request: OrderEmailRequest): Promise<SendEmailResult>;
}

export interface OutboxDrainResult {
  sent: number;
  retrying: number;
  gaveUp: number;
}

export interface QueuedSendResult extends OutboxDrainResult {
  /**
   * How long until the earliest of the keys still to send may be tried again, on this process's
   * clock (the outbox's): at least a second; null: none left to send.
   */
  retryInMs: number | null;
}

/** Sends what an SMTP outage left behind. */
export interface EmailOutbox {
  /** Every due e-mail (the safety-net cron, src/inngest/functions/drain-email-outbox.ts). */
  drain(options?: { limit?: number }): Promise<OutboxDrainResult>;
  /**
   * The due e-mails among `keys` (a batch of `shop/email.queued`,
   * src/inngest/functions/send-held-back-emails.ts), and when the rest come due.
   */
  sendQueued(keys: readonly string[]): Promise<QueuedSendResult>;
}

/**
 * Told when an e-mail is left in the outbox by a workflow's own attempt (the mail server refused
 * it, or another attempt holds it): the app sends `shop/email.queued`. Never told for the outbox's
 * own retries, whose run already waits for the e-mail.
 */
export type QueuedNotifier = (email: { idempotencyKey: string; attempts: number }) => Promise<void>;

export interface OutboxRetryPolicy {
  /** How long after the first attempt an e-mail is still retried; then ops are alerted. */
  giveUpAfterMs: number;
  /** Delay before retry n (1-based): doubling from this ... */
  firstRetryAfterMs: number;
  /** ... up to this. */
  maxRetryAfterMs: number;
}

export const defaultRetryPolicy: OutboxRetryPolicy = {
  giveUpAfterMs: 3 * 24 * 3600_000,
  firstRetryAfterMs: 60_000,
  maxRetryAfterMs: 3600_000,
};

/**
 * Longer than the SMTP timeouts in smtp-transport.ts allow one attempt to take; a lease left by a
 * process that died runs out after it, and the e-mail is free to be sent again.
 */
const leaseMs = 2 * 60_000;
/** How long a second attempt for the same key waits for the first to finish before answering `queued`. */
const waitForHolderMs = 5_000;
const pollMs = 100;
/** sendQueued's shortest wait: a run never spins on an e-mail due a moment from now. */
const minRetryWaitMs = 1_000;

export interface LeasedRow {
  id: string;
  message_id: string;
  recipient: string;
  subject: string | null;
  body_text: string | null;
  body_html: string | null;
  attempts: number;
  created_at: Date;
  order_id: string | null;
  template: string;
  idempotency_key: string;
}

const leasedColumns = `id, message_id, recipient, subject, body_text, body_html, attempts, created_at,
  order_id, template, idempotency_key`;

/** Told when the outbox gives up on an e-mail: ops must hear of it. */
export type GiveUpNotifier = (email: {
  idempotencyKey: string;
  orderId: string | null;
  template: string;
  attempts: number;
  error: string;
}) => Promise<void>;

/**
 * Sends each e-mail once per idempotency key, with no database connection held while the mail
 * server is talked to:
 *
 * 1. Claim: insert the key with the rendered message as a `pending` row (ON CONFLICT DO NOTHING).
 * 2. Lease: one conditional UPDATE (autocommit) takes the row if it is not `sent` and no live
 *    lease is on it, setting `lease_until`. A second attempt for the key (a retried step racing its
 *    predecessor) finds the lease held and waits a moment for `sent`, polling with short queries.
 * 3. SMTP, outside any transaction. Then `sent` (with the provider's id) or `failed` with the next
 *    attempt's time (backoff), releasing the lease. A failure is not thrown: the workflow goes on,
 *    and `drain()` (the outbox cron) sends the e-mail when the server is back, or gives up after
 *    `giveUpAfterMs` and alerts ops.
 *
 * The window that remains: the mail server accepted the message but the process dies before `sent`
 * is recorded. The lease runs out and the e-mail is sent again with the same Message-ID, derived
 * from the key, which receiving systems deduplicate or thread on. SMTP offers nothing better.
 */
/** Takes the lease on a key's e-mail (the outbox's attempts, and a direct send's second). */
export const leaseStatement = `UPDATE email_messages
       SET lease_until = $1, attempts = attempts + 1,
           subject = COALESCE(subject, $2), body_text = COALESCE(body_text, $3),
           body_html = COALESCE(body_html, $4)
       WHERE idempotency_key = $5 AND status <> 'sent'
         AND (lease_until IS NULL OR lease_until < $6)
         AND ($7 OR gave_up_at IS NULL)
       RETURNING ${leasedColumns}`;

/** A direct send's claim and lease in one statement: the row inserted leased, or leased if it exists. */
export const sendStatement = `INSERT INTO email_messages AS m (id, idempotency_key, order_id, template, recipient, status,
             message_id, created_at, subject, body_text, body_html, attempts, lease_until)
         VALUES ($1::uuid, $2, $3::uuid, $4, $5, 'pending', $6, $7, $8, $9, $10, 1, $11)
         ON CONFLICT (idempotency_key) DO UPDATE
         SET lease_until = EXCLUDED.lease_until, attempts = m.attempts + 1,
             subject = COALESCE(m.subject, EXCLUDED.subject), body_text = COALESCE(m.body_text, EXCLUDED.body_text),
             body_html = COALESCE(m.body_html, EXCLUDED.body_html)
         WHERE m.status <> 'sent' AND (m.lease_until IS NULL OR m.lease_until < $7)
         RETURNING ${leasedColumns}`;

/**
 * sendToOrder's claim and lease, and the order it renders from, in one statement: the row inserted
 * leased without a message (the recipient the order's e-mail), or leased if it exists, by the same
 * conditions as sendStatement. The order's row comes back whether or not the lease was taken (no
 * row: the order does not exist, and nothing is claimed).
 */
export const sendToOrderStatement = `WITH o AS (
           SELECT o.id, o.email, o.currency, o.total, o.money_breakdown, ${orderLinesJsonSql("o")} AS lines
           FROM orders o WHERE o.id = $3::uuid
         ), claimed AS (
           INSERT INTO email_messages AS m (id, idempotency_key, order_id, template, recipient, status,
                  message_id, created_at, attempts, lease_until)
           SELECT $1::uuid, $2, o.id, $4, o.email, 'pending', $5, $6, 1, $7 FROM o
           ON CONFLICT (idempotency_key) DO UPDATE
           SET lease_until = EXCLUDED.lease_until, attempts = m.attempts + 1
           WHERE m.status <> 'sent' AND (m.lease_until IS NULL OR m.lease_until < $6)
           RETURNING ${leasedColumns}
         )
         SELECT o.id AS "orderId", o.email AS "orderEmail", o.currency AS "orderCurrency",
                o.total AS "orderTotal", o.money_breakdown AS "orderMoney", o.lines AS "orderLines", c.*
         FROM o LEFT JOIN claimed c ON true`;

/** A row of sendToOrderStatement: the order, and the leased e-mail's columns (null: not leased). */
export type SendToOrderRow = {
  orderId: string;
  orderEmail: string;
  orderCurrency: string;
  orderTotal: number;
  orderMoney: unknown;
  orderLines: OrderLineJson[];
} & ({ [K in keyof LeasedRow]: LeasedRow[K] } | { [K in keyof LeasedRow]: null });

/** The timeline's insert (src/timeline/timeline.ts is its one writer otherwise), after the outcome's update. */
const withEntry = (update: string, first: number) => `WITH recorded AS (${update} RETURNING order_id)
         INSERT INTO order_timeline (order_id, kind, detail, run_id)
         SELECT order_id, $${first}, $${first + 1}::jsonb, $${first + 2} FROM recorded WHERE order_id IS NOT NULL
         ON CONFLICT DO NOTHING`;

/**
 * The outcome's update, the order's move and the entry in one statement (the shape of the orders'
 * transition with its entry, src/orders/order-repository.ts): the entry does not depend on the
 * move; `moved` is 1 only when this statement moved the order.
 */
const withMoveAndEntry = (update: string, first: number) => `WITH recorded AS (${update} RETURNING order_id),
         moved AS (
           UPDATE orders o SET status = $${first + 4}::order_status, updated_at = now()
           FROM recorded r WHERE o.id = r.order_id AND o.status = ANY($${first + 3}::order_status[])
           RETURNING 1
         ),
         entry AS (
           INSERT INTO order_timeline (order_id, kind, detail, run_id)
           SELECT order_id, $${first}, $${first + 1}::jsonb, $${first + 2} FROM recorded WHERE order_id IS NOT NULL
           ON CONFLICT DO NOTHING
         )
         SELECT count(*)::int AS moved FROM moved`;

/** The move and the entry alone, for an outcome no attempt of this call recorded. */
export const moveWithEntryStatement = `WITH moved AS (
           UPDATE orders SET status = $6::order_status, updated_at = now()
           WHERE id = $1::uuid AND status = ANY($5::order_status[])
           RETURNING 1
         ),
         entry AS (
           INSERT INTO order_timeline (order_id, kind, detail, run_id)
           VALUES ($1::uuid, $2, $3::jsonb, $4)
           ON CONFLICT DO NOTHING
         )
         SELECT count(*)::int AS moved FROM moved`;

export function createEmailSender(deps: {
  db: Database;
  transport: EmailTransport;
  from: string;
  logger: Logger;
  retry?: OutboxRetryPolicy;
  onGiveUp?: GiveUpNotifier;
  onQueued?: QueuedNotifier;
  now?: () => Date;
}): EmailSender & EmailOutbox {
  const { db, transport, from, logger } = deps;
  // Every order sends two e-mails: their statements go to pg directly (docs/benchmarks.md).
  const sql = sqlPool(db);
  const timeline = createTimeline(db);
  const retry = deps.retry ?? defaultRetryPolicy;
  const now = deps.now ?? (() => new Date());

  /**
   * An e-mail left for the outbox: its event (best effort; should it not go, the safety-net cron
   * sends the e-mail within hours, so the workflow is not failed for it).
   */
  async function tellQueued(idempotencyKey: string, attempts: number): Promise<void> {
    if (!deps.onQueued) return;
    try {
      await deps.onQueued({ idempotencyKey, attempts });
    } catch (error) {
      logger.warn({ err: error, idempotencyKey }, "e-mail left in the outbox; its retry event was not sent");
    }
  }

  const backoffMs = (attempts: number) =>
    Math.min(retry.maxRetryAfterMs, retry.firstRetryAfterMs * 2 ** Math.max(0, attempts - 1));

  /** Takes the lease on `key`, or returns undefined when it is sent, held, or (for the outbox) given up. */
  async function lease(
    key: string,
    options: { content?: EmailContent; includeGivenUp: boolean },
  ): Promise<LeasedRow | undefined> {
    const at = now();
    const until = new Date(at.getTime() + leaseMs);
    const { content } = options;
    const { rows } = await sql.query<LeasedRow>(leaseStatement, [
      until,
      content?.subject ?? null,
      content?.text ?? null,
      content?.html ?? null,
      key,
      at,
      options.includeGivenUp,
    ]);
    const row = rows[0];
    return row;
  }

  /**
   * One SMTP attempt on a leased row; records the outcome and releases the lease. `content` is the
   * message rendered for a row that has none stored, stored with the outcome (a failed attempt's
   * message is what the outbox sends later); `entry` is written in the same statement.
   */
  async function attempt(
    row: LeasedRow,
    content?: EmailContent,
    entry?: OutcomeEntry,
    move?: OrderMove,
    byOutbox = false,
  ): Promise<SendEmailResult> {
    const log = logger.child({
      idempotencyKey: row.idempotency_key,
      template: row.template,
      orderId: row.order_id ?? undefined,
    });
    const message =
      row.subject !== null && row.body_text !== null && row.body_html !== null
        ? { subject: row.subject, text: row.body_text, html: row.body_html }
        : content;
    if (!message) throw new Error(`email ${row.idempotency_key}: no rendered message stored`);
    const store = message === content ? [content.subject, content.text, content.html] : [null, null, null];
    const entryValues = (result: SendEmailResult) =>
      entry
        ? [
            entry.kind,
            JSON.stringify(entry.detail({ idempotencyKey: row.idempotency_key, ...result })),
            entry.runId,
            ...(move ? [move.from, move.to] : []),
          ]
        : [];
    // With a move the entry rides along: a move always has one (sendToOrder's request).
    const compose = (update: string, first: number) =>
      !entry ? update : move ? withMoveAndEntry(update, first) : withEntry(update, first);
    const tellMoved = (rows: { moved?: number }[]) => {
      if (entry && move && rows[0]?.moved) move.onMoved?.();
    };
    try {
      const receipt = await transport.send({
        messageId: row.message_id,
        from,
        to: row.recipient,
        ...message,
      });
      const result: SendEmailResult = { status: "sent", messageId: row.message_id };
      const update = `UPDATE email_messages
         SET status = 'sent', provider_message_id = $2, sent_at = $3, error = NULL, lease_until = NULL,
             next_attempt_at = NULL, gave_up_at = NULL, subject = COALESCE(subject, $4),
             body_text = COALESCE(body_text, $5), body_html = COALESCE(body_html, $6)
         WHERE id = $1::uuid`;
      const recorded = await sql.query<{ moved?: number }>(compose(update, 7), [
        row.id,
        receipt.providerMessageId,
        now(),
        ...store,
        ...entryValues(result),
      ]);
      tellMoved(recorded.rows);
      log.info(
        { messageId: row.message_id, transport: transport.kind, attempts: row.attempts },
        "e-mail sent",
      );
      return result;
    } catch (error) {
      const failure = (error instanceof Error ? error.message : String(error)).slice(0, 2000);
      const at = now();
      const giveUp = at.getTime() - row.created_at.getTime() >= retry.giveUpAfterMs;
      const result: SendEmailResult = {
        status: giveUp ? "undeliverable" : "queued",
        messageId: row.message_id,
      };
      const update = `UPDATE email_messages
         SET status = 'failed', error = $2, lease_until = NULL, next_attempt_at = $3, gave_up_at = $4,
             subject = COALESCE(subject, $5), body_text = COALESCE(body_text, $6),
             body_html = COALESCE(body_html, $7)
         WHERE id = $1::uuid`;
      const recorded = await sql.query<{ moved?: number }>(compose(update, 8), [
        row.id,
        failure,
        giveUp ? null : new Date(at.getTime() + backoffMs(row.attempts)),
        giveUp ? at : null,
        ...store,
        ...entryValues(result),
      ]);
      tellMoved(recorded.rows);
      if (!giveUp) {
        const retryAt = new Date(at.getTime() + backoffMs(row.attempts));
        log.warn(
          { err: error, transport: transport.kind, attempts: row.attempts, retryAt, outbox: "queued" },
          "e-mail could not be sent",
        );
        if (!byOutbox) await tellQueued(row.idempotency_key, row.attempts);
        return result;
      }
      log.error({ err: error, attempts: row.attempts }, "e-mail given up after retrying; ops alerted");
      await deps.onGiveUp?.({
        idempotencyKey: row.idempotency_key,
        orderId: row.order_id,
        template: row.template,
        attempts: row.attempts,
        error: failure,
      });
      return result;
    }
  }

  /** An outcome no attempt of this call recorded (sent earlier, held by another): its entry alone. */
  async function recordEntry(
    orderId: string,
    idempotencyKey: string,
    result: SendEmailResult,
    entry?: OutcomeEntry,
    move?: OrderMove,
  ) {
    if (!entry) return;
    const detail = entry.detail({ idempotencyKey, ...result });
    if (!move) {
      await timeline.record(orderId, entry.kind, detail, entry.runId);
      return;
    }
    const { rows } = await sql.query<{ moved: number }>(moveWithEntryStatement, [
      orderId,
      entry.kind,
      JSON.stringify(detail),
      entry.runId,
      move.from,
      move.to,
    ]);
    if (rows[0]?.moved) move.onMoved?.();
  }

  /**
   * The key's row was not leased by the claim: sent already, or another attempt holds it. Waits a
   * moment for the holder's outcome, taking the lease should it run out; `take` is that lease.
   * `storeMessage`: for a holder that stored no message yet (sendToOrder renders after its claim),
   * stores this attempt's render, so that the outbox can send it should the holder have died.
   */
  async function awaitHolder(
    key: string,
    take: () => Promise<SendEmailResult | undefined>,
    storeMessage?: () => Promise<void>,
  ): Promise<SendEmailResult> {
    const deadline = Date.now() + waitForHolderMs;
    for (;;) {
      const current = (
        await sql.query<{ status: string; messageId: string; rendered: boolean; attempts: number }>(
          `SELECT status::text AS status, message_id AS "messageId", subject IS NOT NULL AS rendered, attempts
           FROM email_messages WHERE idempotency_key = $1`,
          [key],
        )
      ).rows[0];
      if (!current) throw new Error(`email ${key}: claimed row disappeared`);
      if (current.status === "sent") {
        logger.info(
          { idempotencyKey: key, messageId: current.messageId },
          "e-mail already sent; nothing to do",
        );
        return { status: "already-sent", messageId: current.messageId };
      }
      // Another attempt holds the lease: it (or, should it fail, the outbox) sends the e-mail.
      if (Date.now() >= deadline) {
        if (!current.rendered) await storeMessage?.();
        // Should the holder die before its outcome, the lease runs out and the outbox sends it.
        await tellQueued(key, current.attempts);
        return { status: "queued", messageId: current.messageId };
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      const taken = await take();
      if (taken) return taken;
    }
  }

  return {
    async send(request) {
      // Steps 1 and 2 in one statement for the first attempt: the key's row is inserted already
      // leased (attempts 1), or, when it exists, leased by the same conditions as lease() (a direct
      // send also takes an e-mail the outbox gave up on). No row back: sent, or a live lease holds it.
      const at = now();
      const { rows } = await sql.query<LeasedRow>(sendStatement, [
        randomUUID(),
        request.idempotencyKey,
        request.orderId ?? null,
        request.template,
        request.to,
        messageIdFor(request.idempotencyKey, from),
        // On the sender's clock, which the retry window and the lease are measured on.
        at,
        request.content.subject,
        request.content.text,
        request.content.html,
        new Date(at.getTime() + leaseMs),
      ]);
      const row = rows[0];
      if (row) return attempt(row);
      // A direct send is an explicit new attempt: it also takes an e-mail the outbox gave up on.
      return awaitHolder(request.idempotencyKey, async () => {
        const leased = await lease(request.idempotencyKey, {
          content: request.content,
          includeGivenUp: true,
        });
        return leased ? attempt(leased) : undefined;
      });
    },

    async sendToOrder(request) {
      if (request.move && !request.entry) throw new Error("an order's move rides with its entry: give both");
      const at = now();
      const { rows } = await sql.query<SendToOrderRow>(sendToOrderStatement, [
        randomUUID(),
        request.idempotencyKey,
        request.orderId,
        request.template,
        messageIdFor(request.idempotencyKey, from),
        at,
        new Date(at.getTime() + leaseMs),
      ]);
      const found = rows[0];
      if (!found) throw new Error(`Order ${request.orderId} not found: no e-mail to send`);
      const order: OrderForEmail = {
        id: found.orderId,
        email: found.orderEmail,
        currency: found.orderCurrency,
        total: found.orderTotal,
        lines: found.orderLines,
        // Only an order with a recorded breakdown carries one (the rest render as they always did).
        ...(found.orderMoney ? { moneyBreakdown: found.orderMoney } : {}),
      };
      const send = (row: LeasedRow) =>
        attempt(row, row.subject === null ? request.render(order) : undefined, request.entry, request.move);
      if (found.id !== null) return send(found as LeasedRow & SendToOrderRow);
      let attempted = false;
      const result = await awaitHolder(
        request.idempotencyKey,
        async () => {
          const leased = await lease(request.idempotencyKey, { includeGivenUp: true });
          if (!leased) return undefined;
          attempted = true;
          return send(leased);
        },
        // The first render wins: a live holder's `sent` keeps what is stored (COALESCE).
        async () => {
          const content = request.render(order);
          await sql.query(
            `UPDATE email_messages SET subject = $2, body_text = $3, body_html = $4
             WHERE idempotency_key = $1 AND subject IS NULL`,
            [request.idempotencyKey, content.subject, content.text, content.html],
          );
        },
      );
      if (!attempted)
        await recordEntry(request.orderId, request.idempotencyKey, result, request.entry, request.move);
      return result;
    },

    async drain(options = {}) {
      const at = now();
      const { rows: due } = await sql.query<{ idempotency_key: string }>(
        `SELECT idempotency_key FROM email_messages
         WHERE status <> 'sent' AND gave_up_at IS NULL AND subject IS NOT NULL
           AND (lease_until IS NULL OR lease_until < $1)
           AND COALESCE(next_attempt_at, created_at) <= $1
         ORDER BY COALESCE(next_attempt_at, created_at)
         LIMIT $2`,
        [at, options.limit ?? 50],
      );
      const result: OutboxDrainResult = { sent: 0, retrying: 0, gaveUp: 0 };
      for (const { idempotency_key: key } of due) {
        const row = await lease(key, { includeGivenUp: false });
        if (!row) continue; // sent or taken by someone else since the query
        const outcome = await attempt(row, undefined, undefined, undefined, true);
        if (outcome.status === "sent") result.sent += 1;
        else if (outcome.status === "undeliverable") result.gaveUp += 1;
        else result.retrying += 1;
      }
      return result;
    },

    async sendQueued(keys) {
      const result: QueuedSendResult = { sent: 0, retrying: 0, gaveUp: 0, retryInMs: null };
      if (keys.length === 0) return result;
      const at = now();
      // The same conditions as drain's, for these keys only.
      const { rows: due } = await sql.query<{ idempotency_key: string }>(
        `SELECT idempotency_key FROM email_messages
         WHERE idempotency_key = ANY($2::text[]) AND status <> 'sent' AND gave_up_at IS NULL
           AND subject IS NOT NULL AND (lease_until IS NULL OR lease_until < $1)
           AND COALESCE(next_attempt_at, created_at) <= $1
         ORDER BY COALESCE(next_attempt_at, created_at)`,
        [at, [...keys]],
      );
      for (const { idempotency_key: key } of due) {
        const row = await lease(key, { includeGivenUp: false });
        if (!row) continue;
        const outcome = await attempt(row, undefined, undefined, undefined, true);
        if (outcome.status === "sent") result.sent += 1;
        else if (outcome.status === "undeliverable") result.gaveUp += 1;
        else result.retrying += 1;
      }
      // What is left: due again at its backoff, or once a lease someone holds runs out.
      const { rows } = await sql.query<{ next: Date | null }>(
        `SELECT min(greatest(COALESCE(next_attempt_at, created_at), COALESCE(lease_until, created_at))) AS next
         FROM email_messages
         WHERE idempotency_key = ANY($1::text[]) AND status <> 'sent' AND gave_up_at IS NULL`,
        [[...keys]],
      );
      const next = rows[0]?.next;
      if (next) result.retryInMs = Math.max(minRetryWaitMs, new Date(next).getTime() - now().getTime());
      return result;
    },
  };
}
