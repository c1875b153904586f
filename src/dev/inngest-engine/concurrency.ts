import type { ConcurrencySlot } from "./types";

/**
 * Concurrency limits count executing steps, as in Inngest: a slot is held only while a call
 * to the app is in flight, so a sleeping or waiting run holds none. Slots live in memory: one
 * engine owns a schema (advisory lock), and a slot belongs to an HTTP call that cannot
 * outlive the process, so after a restart every slot is rightly free again.
 */
export class ConcurrencyLimiter {
  private readonly used = new Map<string, number>();
  private readonly waiting: { slots: ConcurrencySlot[]; grant: () => void }[] = [];

  /** Resolves with a release function once every slot has room; waiters are served FIFO. */
  async acquire(slots: ConcurrencySlot[]): Promise<() => void> {
    if (slots.length === 0) return () => undefined;
    const granted = new Promise<void>((grant) => this.waiting.push({ slots, grant }));
    this.grantWaiting();
    await granted;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const slot of slots) {
        const count = (this.used.get(slot.key) ?? 1) - 1;
        if (count <= 0) this.used.delete(slot.key);
        else this.used.set(slot.key, count);
      }
      this.grantWaiting();
    };
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  private fits(slots: ConcurrencySlot[]): boolean {
    return slots.every((slot) => (this.used.get(slot.key) ?? 0) < slot.limit);
  }

  private take(slots: ConcurrencySlot[]): void {
    for (const slot of slots) this.used.set(slot.key, (this.used.get(slot.key) ?? 0) + 1);
  }

  /** Grants in order, skipping waiters whose keys are still full so other keys are not blocked. */
  private grantWaiting(): void {
    const blockedKeys = new Set<string>();
    for (let i = 0; i < this.waiting.length;) {
      const waiter = this.waiting[i];
      if (!waiter) break;
      const blockedBehindEarlier = waiter.slots.some((slot) => blockedKeys.has(slot.key));
      if (!blockedBehindEarlier && this.fits(waiter.slots)) {
        this.take(waiter.slots);
        this.waiting.splice(i, 1);
        waiter.grant();
        continue;
      }
      for (const slot of waiter.slots) blockedKeys.add(slot.key);
      i++;
    }
  }
}
