import { type WorkContext } from "./context";

/** The return that expired (its steps, refunded, restocked or written off and closed, are in src/inngest/steps). */
export function createSettlementWork(ctx: WorkContext) {
  const { records, timeline, load } = ctx;
  return {
    /** The label waited RETURN_SHIP_WITHIN and no parcel came: the return is cancelled. */
    async expire(returnId: string, runId: string) {
      const row = await load(returnId);
      const cancelled = await records.transition(returnId, ["requested", "approved"], "cancelled", {
        note: "no parcel within the return period",
      });
      if (cancelled) {
        await timeline.record(row.order_id, "return-cancelled", { returnId, reason: "expired" }, runId);
      }
      return { status: (cancelled ?? row).status };
    },
  };
}
