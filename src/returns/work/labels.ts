import { type WorkContext } from "./context";

/**
 * Hands back a label the return no longer wants (it ended while the label was bought), with one
 * `return-label-refund-requested` entry for the run; a label the carrier will not take back is
 * for ops, told once per return and label.
 */
export async function handBackUnwanted(
  ctx: WorkContext,
  row: { id: string; order_id: string; status: string },
  label: "return" | "exchange",
  trackingNumber: string,
  runId: string,
): Promise<string> {
  const { deps, records, timeline } = ctx;
  const status = await deps.labels.handBack(row.id, label);
  if (label === "return" && status !== "not-found") await records.recordLabelRefund(row.id, status);
  await timeline.record(
    row.order_id,
    "return-label-refund-requested",
    { returnId: row.id, status, label, trackingNumber, why: `the return was ${row.status} as it was bought` },
    label === "return" ? runId : `${runId}/exchange`,
  );
  if (status === "not-voidable" || status === "rejected") {
    await deps.alerts.notify({
      key: `unwanted-${label}-label-${row.id}`,
      title: `${label === "exchange" ? "An" : "A"} ${label} label bought for an ended return was not taken back`,
      fields: {
        orderId: row.order_id,
        returnId: row.id,
        trackingNumber,
        action: "Ask the carrier to refund the label; make sure no parcel is sent on it",
      },
    });
  }
  return status;
}
