import type { CarrierBooking } from "../../shipping/shipping-provider";
import type { RecordsContext } from "./context";

/**
 * A return carries two labels, the return label (`label_*`) and the exchange's (`exchange_*`), with
 * the same columns under each prefix. The prefix comes from this fixed table, never from input.
 */
const labelColumns = {
  label: {
    booking: "label_carrier, label_tracking_number, label_tracking_url, label_url, label_provider_id",
    tracking: "label_tracking_number",
    sent: "label_sent_at",
  },
  exchange: {
    booking:
      "exchange_carrier, exchange_tracking_number, exchange_tracking_url, exchange_label_url, exchange_provider_id",
    tracking: "exchange_tracking_number",
    sent: "exchange_sent_at",
  },
} as const;

/** The return label and the exchange's: bought once, sent once, tracked, handed back. */
export function createLabelRecords(ctx: RecordsContext) {
  const { sql } = ctx;
  /** Records a bought label once: a retried step that finds one recorded keeps it. */
  const recordBooking = async (
    which: keyof typeof labelColumns,
    returnId: string,
    booking: CarrierBooking,
  ): Promise<void> => {
    const columns = labelColumns[which];
    await sql.query(
      `UPDATE returns SET (${columns.booking}) = ($2, $3, $4, $5, $6), updated_at = now()
       WHERE id = $1::uuid AND ${columns.tracking} IS NULL`,
      [
        returnId,
        booking.carrier,
        booking.trackingNumber,
        booking.trackingUrl,
        booking.labelUrl ?? null,
        booking.providerId ?? null,
      ],
    );
  };

  const markSent = async (which: keyof typeof labelColumns, returnId: string): Promise<void> => {
    const { sent } = labelColumns[which];
    await sql.query(
      `UPDATE returns SET ${sent} = COALESCE(${sent}, now()), updated_at = now() WHERE id = $1::uuid`,
      [returnId],
    );
  };

  return {
    /** The bought return label, once: a retried step that finds one recorded keeps it. */
    recordLabel: (returnId: string, booking: CarrierBooking) => recordBooking("label", returnId, booking),
    markLabelSent: (returnId: string) => markSent("label", returnId),

    async recordLabelRefund(returnId: string, status: string): Promise<void> {
      await sql.query(`UPDATE returns SET label_refund_status = $2, updated_at = now() WHERE id = $1::uuid`, [
        returnId,
        status,
      ]);
    },

    /** The return tracker's latest status; a late scan after receipt does not move it back. */
    async recordTrackerStatus(returnId: string, status: string): Promise<void> {
      await sql.query(
        `UPDATE returns SET label_tracker_status = $2, updated_at = now()
         WHERE id = $1::uuid AND (label_tracker_status IS DISTINCT FROM 'delivered')`,
        [returnId, status],
      );
    },

    /**
     * The exchange parcel's tracker status, and its delivery once: a late scan after delivery does
     * not move it back, and a repeated delivery event finds it delivered (false: nothing new).
     */
    async recordExchangeTrackerStatus(returnId: string, status: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_tracker_status = $2,
                exchange_delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE exchange_delivered_at END,
                updated_at = now()
         WHERE id = $1::uuid AND exchange_tracker_status IS DISTINCT FROM 'delivered'
           AND exchange_tracker_status IS DISTINCT FROM $2`,
        [returnId, status],
      );
      return (rowCount ?? 0) > 0;
    },

    /** The exchange's label, once, as the return label is. */
    recordExchangeShipment: (returnId: string, booking: CarrierBooking) =>
      recordBooking("exchange", returnId, booking),
    markExchangeSent: (returnId: string) => markSent("exchange", returnId),
  };
}
