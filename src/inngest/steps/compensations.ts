/**
 * The saga's undo list (Temporal's saga sample, Medusa's createStep(invoke, compensate)): each
 * forward step registers its undo right after it succeeds, and every failure path runs the one
 * `run()`, newest first, so a new side effect cannot be forgotten in one of the branches.
 * The handler replays deterministically, so the list is rebuilt identically on every call;
 * each undo is itself an idempotent step (`release-stock`, `return-payment`).
 */
export class Compensations {
  private readonly undos: { id: string; undo: () => Promise<unknown> }[] = [];

  add(id: string, undo: () => Promise<unknown>): void {
    this.undos.unshift({ id, undo });
  }

  /** Runs every registered undo, newest first; returns each one's result by its step id. */
  async run(): Promise<Map<string, unknown>> {
    const results = new Map<string, unknown>();
    for (const { id, undo } of this.undos) results.set(id, await undo());
    return results;
  }
}
