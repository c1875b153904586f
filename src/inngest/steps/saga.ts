import type { StepContext } from "./context";

/**
 * Each forward step declared with its undo, the way Medusa's `createStep(id, invoke, compensate)`
 * pairs them and Temporal's saga sample unshifts a compensation after each activity, in a small
 * helper of our own (neither fits Inngest's step tools): a step file exports its step and names its
 * undo, a workflow runs its steps through one `Saga`, and the compensation is derived from what
 * ran, newest first, never registered by hand at a call site.
 *
 * Undos are durable steps themselves (their ids are Inngest state: never rename one), idempotent by
 * a key, so running one that has nothing to undo, or running it twice, changes nothing more.
 */

/** A step that undoes a forward step's side effect; `R` is what it reports (a settlement, say). */
export interface Undo<R> {
  /** Its Inngest step id. */
  readonly id: string;
  readonly run: (ctx: StepContext) => Promise<R>;
}

export function defineUndo<R>(id: string, run: (ctx: StepContext) => Promise<R>): Undo<R> {
  return { id, run };
}

/** A forward step: what it does, and the undo its outcome leaves owed, if any. */
export interface Step<Args extends unknown[], Out> {
  /** Its Inngest step id (the last one, when it runs several). */
  readonly id: string;
  readonly invoke: (ctx: StepContext, ...args: Args) => Promise<Out>;
  readonly undo: Undo<unknown> | null;
  /** Whether this outcome left a side effect that `undo` must take back. */
  readonly owesUndo: (out: Out) => boolean;
}

export function createStep<Args extends unknown[], Out>(definition: {
  id: string;
  invoke: (ctx: StepContext, ...args: Args) => Promise<Out>;
  /** Omitted: nothing to take back (an e-mail), or the point of no return (the booked parcel). */
  undo?: Undo<unknown>;
  /** Default: every outcome owes the undo. */
  owesUndo?: (out: Out) => boolean;
}): Step<Args, Out> {
  return {
    id: definition.id,
    invoke: definition.invoke,
    undo: definition.undo ?? null,
    owesUndo: definition.owesUndo ?? (() => true),
  };
}

/**
 * Every undo a run of `steps` can come to owe, in compensation order (the last step's first):
 * what a run stopped at any point may have left, for a compensation that cannot know how far
 * it got (the cleanup after a cancelled run, a run cancelled before it claimed the order).
 */
export function undosOf(steps: readonly { readonly undo: Undo<unknown> | null }[]): readonly Undo<unknown>[] {
  const undos: Undo<unknown>[] = [];
  for (const step of steps) if (step.undo && !undos.includes(step.undo)) undos.unshift(step.undo);
  return undos;
}

/** What each undo of a compensation reported, read by the undo itself (so typed, not by id). */
export class UndoResults {
  private readonly results = new Map<Undo<unknown>, unknown>();

  record<R>(undo: Undo<R>, result: R): void {
    this.results.set(undo, result);
  }

  /** Undefined when that undo was not owed, so did not run. */
  of<R>(undo: Undo<R>): R | undefined {
    // Only record() writes, and it stores an R under an Undo<R>: the key's type is the value's.
    return this.results.get(undo) as R | undefined;
  }
}

/** Runs `undos` one after the other, in the order given. */
export async function runUndos(ctx: StepContext, undos: readonly Undo<unknown>[]): Promise<UndoResults> {
  const results = new UndoResults();
  for (const undo of undos) results.record(undo, await undo.run(ctx));
  return results;
}

/**
 * One run's steps: `run` invokes a step and, when its outcome owes its undo, puts the undo first
 * in line; `owed` is then the compensation for everything done so far. The handler replays
 * deterministically, so the list is rebuilt the same on every call of it.
 */
export class Saga {
  private readonly undos: Undo<unknown>[] = [];

  constructor(readonly ctx: StepContext) {}

  async run<Args extends unknown[], Out>(step: Step<Args, Out>, ...args: Args): Promise<Out> {
    const out = await step.invoke(this.ctx, ...args);
    if (step.undo && step.owesUndo(out) && !this.undos.includes(step.undo)) this.undos.unshift(step.undo);
    return out;
  }

  /** The undos owed now, newest first. */
  get owed(): readonly Undo<unknown>[] {
    return [...this.undos];
  }
}
