import type { Logger } from "../../logger";
import type { EngineClock } from "./clock";
import type { CronSchedule } from "./cron";
import { cronKey, type EventStore } from "./event-store";
import type { Executor } from "./executor";
import type { EventIntake } from "./intake";
import type { PendingStarts } from "./flow-control";
import { ulid } from "./ids";
import type { FunctionRegistry } from "./registry";
import type { RunStore } from "./run-store";

const maxTimerDelayMs = 2 ** 31 - 1;

/**
 * Feeds the executor. Enqueued work wakes it in-process (no polling on the hot path); future
 * work (sleeps, wait timeouts, retries, cron) arms one timer for the earliest due time, and a
 * slow poll covers anything else. With a frozen clock only `clock.shift` moves things.
 *
 * Every claim also reads when the earliest job left unclaimed comes due, so the timer needs no
 * statement of its own; freed executor capacity leads to a claim only when the last claim left
 * due work behind (a claim that finds nothing costs a statement per finished call otherwise).
 */
export class Scheduler {
  private pumping = false;
  private pumpAgain = false;
  private pumpScheduled = false;
  /** Real time (Date.now) of the last claim. */
  private lastClaimAt = 0;
  /** The last claim filled the executor (or found it full): due work may be waiting for room. */
  private backlogged = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  /** Earliest known run_at of an unclaimed job (virtual ms): from the last claim and jobs queued since. */
  private earliestJobAt: number | undefined;
  /** Earliest run_at of a pending (debounced or batched) start, virtual ms. */
  private earliestStartAt: number | undefined;
  private readonly cronLastFire = new Map<string, number>();
  /** Real time (Date.now) of each cron's last fire in this process, for coalescing. */
  private readonly cronLastRealFire = new Map<string, number>();
  private unsubscribeClock: (() => void) | undefined;
  /** Crons whose next fire could not be computed, logged once each. */
  private readonly cronsReported = new Set<string>();

  constructor(
    private readonly deps: {
      logger: Logger;
      clock: EngineClock;
      runs: RunStore;
      events: EventStore;
      registry: FunctionRegistry;
      intake: EventIntake;
      executor: Executor;
      pendingStarts: PendingStarts;
    },
    private readonly options: {
      pollIntervalMs: number;
      /**
       * Real ms between two fires of one cron at most once (coalescing what came due meanwhile,
       * as missed fires are not replayed). Only on a fast-running clock: at a huge time scale
       * a 5-minute cron would otherwise start a run every real millisecond.
       */
      cronMinRealIntervalMs: number;
    },
  ) {}

  async start(): Promise<void> {
    await this.refreshCrons();
    this.earliestStartAt = (await this.deps.pendingStarts.earliest())?.getTime();
    this.unsubscribeClock = this.deps.clock.onShift(() => this.onTimer());
    // The fallback poll claims only when no claim ran for a whole interval: each claim already
    // reads the earliest due time, so a busy engine needs no extra statement per second.
    this.poller = setInterval(() => {
      if (Date.now() - this.lastClaimAt >= this.options.pollIntervalMs) this.onTimer();
    }, this.options.pollIntervalMs);
    this.poller.unref();
    this.onTimer();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.poller);
    this.unsubscribeClock?.();
  }

  /** Something became runnable now: claim it soon, coalescing bursts into one claim query. */
  wake = (): void => {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      void this.pump();
    });
  };

  /** The executor has room again: claim only if due work may have been left behind. */
  capacityFreed = (): void => {
    if (this.backlogged) this.wake();
  };

  /** A job was queued for later. */
  noteTimer = (at: Date): void => {
    const atMs = at.getTime();
    if (this.earliestJobAt === undefined || atMs < this.earliestJobAt) {
      this.earliestJobAt = atMs;
      this.armTimer();
    }
  };

  /** A debounced or batched start was stored, due at `at`. */
  noteStartAt = (at: Date): void => {
    const atMs = at.getTime();
    if (this.earliestStartAt === undefined || atMs < this.earliestStartAt) {
      this.earliestStartAt = atMs;
      this.armTimer();
    }
  };

  /** Crons of newly synced functions start counting from now. */
  async refreshCrons(): Promise<void> {
    const crons = this.deps.registry
      .all()
      .flatMap((fn) => fn.crons.map((cron) => ({ functionId: fn.id, cron: cron.source })));
    const lastFires = await this.deps.events.cronLastFires(crons, this.deps.clock.now());
    this.cronLastFire.clear();
    for (const [key, at] of lastFires) this.cronLastFire.set(key, at);
    this.armTimer();
  }

  get idle(): boolean {
    return !this.pumping && !this.pumpScheduled;
  }

  private onTimer(): void {
    if (this.stopped) return;
    void this.pump();
  }

  /** Real ms until the next cron may fire (its due time, and the coalescing interval). */
  private nextCronDelay(): number | undefined {
    let next: number | undefined;
    for (const fn of this.deps.registry.all()) {
      for (const cron of fn.crons) {
        const key = cronKey(fn.id, cron.source);
        const last = this.cronLastFire.get(key);
        if (last === undefined) continue;
        const nextFire = this.nextFireOf(fn.id, cron, last);
        if (nextFire === undefined) continue;
        const delay = Math.max(this.deps.clock.realDelayUntil(nextFire), this.coalescingDelay(key));
        if (next === undefined || delay < next) next = delay;
      }
    }
    return next;
  }

  /**
   * A cron's next fire, or undefined when it cannot be computed: one cron the engine cannot
   * schedule must not keep the timer, and with it every claim, from running.
   */
  private nextFireOf(functionId: string, cron: CronSchedule, last: number): number | undefined {
    try {
      return cron.nextAfter(last);
    } catch (error) {
      const key = cronKey(functionId, cron.source);
      if (!this.cronsReported.has(key)) {
        this.cronsReported.add(key);
        this.deps.logger.error({ err: error, functionId, cron: cron.source }, "cron has no next fire time");
      }
      return undefined;
    }
  }

  private coalescingDelay(key: string): number {
    if (this.deps.clock.timeScale <= 1) return 0;
    const lastReal = this.cronLastRealFire.get(key);
    return lastReal === undefined
      ? 0
      : Math.max(0, lastReal + this.options.cronMinRealIntervalMs - Date.now());
  }

  private armTimer(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const candidates = [
      this.earliestJobAt === undefined ? undefined : this.deps.clock.realDelayUntil(this.earliestJobAt),
      this.nextCronDelay(),
      this.earliestStartAt === undefined ? undefined : this.deps.clock.realDelayUntil(this.earliestStartAt),
    ].filter((delay): delay is number => delay !== undefined && Number.isFinite(delay));
    if (candidates.length === 0) return;
    const delay = Math.min(...candidates);
    this.timer = setTimeout(() => this.onTimer(), Math.min(delay, maxTimerDelayMs));
    this.timer.unref();
  }

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        if (this.stopped) return;
        // Due jobs are claimed whatever the crons do: a cron that failed to fire is tried again
        // on the next pass, and must not stall every run in flight meanwhile.
        await this.fireDueCrons().catch((error: unknown) => {
          if (!this.stopped) this.deps.logger.error({ err: error }, "firing due crons failed");
        });
        await this.startDueDeferred().catch((error: unknown) => {
          if (!this.stopped) this.deps.logger.error({ err: error }, "starting deferred runs failed");
        });
        const executor = this.deps.executor;
        const capacity = executor.capacity;
        if (capacity <= 0) {
          this.backlogged = true;
          break;
        }
        // Jobs queued for later while the claim runs note themselves here (noteTimer); the
        // claim reports every job it could see.
        this.earliestJobAt = undefined;
        this.lastClaimAt = Date.now();
        const { claimed, nextDueAt } = await this.deps.runs.claimDue(
          this.deps.clock.now(),
          capacity,
          executor.heldJobIds(),
        );
        for (const { job, run } of claimed) executor.start(job, run);
        this.backlogged = claimed.length === capacity;
        if (this.backlogged) this.pumpAgain = true;
        const nextMs = nextDueAt?.getTime();
        if (nextMs !== undefined && (this.earliestJobAt === undefined || nextMs < this.earliestJobAt))
          this.earliestJobAt = nextMs;
        this.armTimer();
      } while (this.pumpAgain);
    } catch (error) {
      if (!this.stopped) this.deps.logger.error({ err: error }, "claiming jobs failed");
    } finally {
      this.pumping = false;
    }
  }

  /** Starts the debounced and batched runs that came due (one statement only when one is due). */
  private async startDueDeferred(): Promise<void> {
    const nowMs = this.deps.clock.nowMs();
    if (this.earliestStartAt === undefined || this.earliestStartAt > nowMs) return;
    const now = new Date(nowMs);
    await this.deps.intake.startDeferred(now);
    // Starts stored meanwhile noted themselves; the table says what is left.
    this.earliestStartAt = (await this.deps.pendingStarts.earliest())?.getTime();
    this.armTimer();
  }

  /** Fires each due cron once, for its latest due time (missed fires are not replayed). */
  private async fireDueCrons(): Promise<void> {
    const nowMs = this.deps.clock.nowMs();
    for (const fn of this.deps.registry.all()) {
      for (const cron of fn.crons) {
        const key = cronKey(fn.id, cron.source);
        const last = this.cronLastFire.get(key);
        if (last === undefined) continue;
        const nextFire = this.nextFireOf(fn.id, cron, last);
        if (nextFire === undefined || nextFire > nowMs || this.coalescingDelay(key) > 0) continue;
        // The latest due fire, computed directly: walking every missed fire one by one cost
        // more CPU per pass than real time allowed at a large time scale
        // (docs/decisions/0007-cron-computes-its-latest-due-fire.md).
        const due = cron.latestAtOrBefore(nowMs);
        if (due === undefined || due <= last) continue;
        this.cronLastRealFire.set(key, Date.now());
        const won = await this.deps.events.cronAdvance(fn.id, cron.source, new Date(last), new Date(due));
        this.cronLastFire.set(key, due);
        this.armTimer();
        if (!won) continue;
        const event = {
          id: ulid(due),
          name: "inngest/scheduled.timer",
          data: { cron: cron.source },
          ts: due,
        };
        await this.deps.intake.startRun(fn, event, event.id);
      }
    }
  }
}
