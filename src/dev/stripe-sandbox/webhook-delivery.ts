import Stripe from "stripe";
import type { Logger } from "../../logger";

export interface DeliveryResult {
  eventId: string;
  type: string;
  attempt: number;
  /** HTTP status the endpoint answered, absent when the request itself failed. */
  status?: number;
  error?: string;
}

export interface SignedDelivery {
  payload: string;
  header: string;
}

export interface WebhookDelivererOptions {
  secret: string;
  logger: Logger;
  now: () => number;
  /** Like a Stripe webhook endpoint's `enabled_events`; `*` patterns allowed. */
  enabledEvents: string[];
  /** Automatic redelivery after a failed attempt (Stripe retries for three days); empty: none. */
  retryDelaysMs: number[];
  timeoutMs: number;
}

/** A long-running `npm start` must not grow without bound; tests look at recent deliveries. */
const maxResults = 20_000;

function matchesAny(patterns: string[], type: string): boolean {
  return patterns.some(
    (pattern) =>
      pattern === "*" ||
      pattern === type ||
      (pattern.endsWith(".*") && type.startsWith(pattern.slice(0, -1))),
  );
}

/**
 * Sends events the way Stripe does: a pretty-printed JSON body, signed with the endpoint secret
 * (`Stripe-Signature: t=<unix>,v1=<HMAC-SHA256 of "t.body">`, produced by stripe-node itself),
 * signed afresh at every attempt, 2xx counted as delivered.
 */
export class WebhookDeliverer {
  readonly results: DeliveryResult[] = [];
  private url: string | undefined;
  private background: Promise<unknown> = Promise.resolve();
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** Deliveries to lose on purpose (a webhook Stripe gave up on): event type pattern and count. */
  private drops: { pattern: string; remaining: number }[] = [];

  constructor(private readonly options: WebhookDelivererOptions) {}

  setUrl(url: string | undefined): void {
    this.url = url;
  }

  hasEndpoint(): boolean {
    return this.url !== undefined;
  }

  wants(event: Stripe.Event): boolean {
    return this.url !== undefined && matchesAny(this.options.enabledEvents, event.type);
  }

  sign(event: Stripe.Event): SignedDelivery {
    const payload = JSON.stringify(event, null, 2);
    const header = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: this.options.secret,
      timestamp: Math.floor(this.options.now() / 1000),
    });
    return { payload, header };
  }

  /**
   * The next `times` events matching `pattern` are lost for good: never sent, never retried, as a
   * webhook is after Stripe's three days of failed retries. Redeliver and the Events API still
   * have them.
   */
  drop(pattern: string, times: number): void {
    this.drops.push({ pattern, remaining: times });
  }

  pendingDrops(): { pattern: string; remaining: number }[] {
    return this.drops.map((drop) => ({ ...drop }));
  }

  private takeDrop(type: string): boolean {
    const drop = this.drops.find((candidate) => matchesAny([candidate.pattern], type));
    if (!drop) return false;
    drop.remaining -= 1;
    if (drop.remaining <= 0) this.drops = this.drops.filter((candidate) => candidate !== drop);
    return true;
  }

  /** One attempt, now; a failure schedules the next automatic attempt when retries are configured. */
  async deliver(event: Stripe.Event): Promise<DeliveryResult> {
    const url = this.url;
    const attempt = (this.attempts.get(event.id) ?? 0) + 1;
    this.attempts.set(event.id, attempt);
    const result: DeliveryResult = { eventId: event.id, type: event.type, attempt };
    if (attempt === 1 && this.takeDrop(event.type)) {
      result.error = "dropped on request";
      this.results.push(result);
      return result;
    }
    if (url === undefined) {
      result.error = "no webhook URL configured";
    } else {
      const { payload, header } = this.sign(event);
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json; charset=utf-8",
            "stripe-signature": header,
            "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
          },
          body: payload,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        await response.arrayBuffer();
        result.status = response.status;
      } catch (error) {
        result.error = error instanceof Error ? error.message : String(error);
      }
    }
    this.results.push(result);
    if (this.results.length > maxResults) this.results.splice(0, this.results.length - maxResults);
    const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
    this.options.logger.debug({ ...result, delivered }, "stripe sandbox webhook delivery");
    if (!delivered && url !== undefined) this.scheduleRetry(event, attempt);
    return result;
  }

  /** Delivers in order, one at a time, after the API response (as Stripe does, asynchronously). */
  deliverInBackground(events: Stripe.Event[]): void {
    const wanted = events.filter((event) => this.wants(event));
    if (wanted.length === 0) return;
    this.background = this.background.then(async () => {
      for (const event of wanted) if (!this.closed) await this.deliver(event);
    });
  }

  /** Resolves once every background delivery queued so far has been attempted. */
  async idle(): Promise<void> {
    await this.background;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private scheduleRetry(event: Stripe.Event, attempt: number): void {
    const delay = this.options.retryDelaysMs[attempt - 1];
    if (delay === undefined || this.closed) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.deliverInBackground([event]);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }
}
