import type { StepContext } from "./context";

/** The return a process-return step works on, and the port its work is called through (steps/return-work.ts). */
export function returnWorkOf(ctx: StepContext) {
  const returns = ctx.deps.returns;
  if (!returns || !ctx.returnId)
    throw new Error("process-return runs without its return or the returns' wiring");
  return { work: returns.work, returnId: ctx.returnId };
}
