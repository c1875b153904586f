import type { EasyPost } from "../shipping/easypost-carrier";
import type { ShopDay } from "./shop-day";

/** A label the carrier charged for (or refunded), as the reconciliation compares it. */
export interface CarrierShipment {
  id: string;
  reference: string | null;
  trackingCode: string | null;
  /** The postage paid, in the carrier's currency; null without a label. */
  rate: { amount: string; currency: string } | null;
  /** EasyPost's refund_status: "submitted", "refunded", "rejected", "not_applicable" or null (never asked). */
  refundStatus: string | null;
  /** Whether the postage is charged: false for a carrier billed on scan until it scans the parcel. */
  postageCharged: boolean;
  createdAt: string;
}

export interface CarrierLedger {
  name: string;
  /** The shipments with a label bought in the day, newest first, a page at a time. */
  shipmentPages(day: ShopDay): AsyncIterable<CarrierShipment[]>;
  /** A shipment by id or reference; null when the carrier has none. */
  shipment(idOrReference: string): Promise<CarrierShipment | null>;
}

export interface EasyPostShipmentShape {
  id: string;
  reference?: string | null;
  tracking_code?: string | null;
  selected_rate?: { rate: string; currency: string } | null;
  refund_status?: string | null;
  fees?: { type: string; charged: boolean }[];
  created_at: string;
}

const toCarrierShipment = (shipment: EasyPostShipmentShape): CarrierShipment => ({
  id: shipment.id,
  reference: shipment.reference ?? null,
  trackingCode: shipment.tracking_code ?? null,
  rate: shipment.selected_rate
    ? { amount: shipment.selected_rate.rate, currency: shipment.selected_rate.currency }
    : null,
  refundStatus: shipment.refund_status ?? null,
  // No PostageFee listed: charged as usual (EasyPost lists one for every label it sells).
  postageCharged: (shipment.fees ?? []).find((fee) => fee.type === "PostageFee")?.charged ?? true,
  createdAt: shipment.created_at,
});

const pageSize = 100;

/** EasyPost's GET /v2/shipments through the official client (`all`, then `getNextPage`). */
export function createEasyPostLedger(client: () => Promise<EasyPost>): CarrierLedger {
  return {
    name: "easypost",
    async *shipmentPages(day) {
      const easyPost = await client();
      let page = (await easyPost.Shipment.all({
        start_datetime: day.start.toISOString(),
        end_datetime: new Date(day.end.getTime() - 1).toISOString(),
        page_size: pageSize,
        purchased: true,
      })) as unknown as { shipments: EasyPostShipmentShape[]; has_more: boolean };
      for (;;) {
        if (page.shipments.length > 0) yield page.shipments.map(toCarrierShipment);
        if (!page.has_more || page.shipments.length === 0) return;
        try {
          page = (await easyPost.Shipment.getNextPage(page as never, pageSize)) as unknown as typeof page;
        } catch (error) {
          // The client's way of saying there is no next page.
          if ((error as Error).name === "EndOfPaginationError") return;
          throw error;
        }
      }
    },
    async shipment(idOrReference) {
      const easyPost = await client();
      try {
        return toCarrierShipment(
          (await easyPost.Shipment.retrieve(idOrReference)) as unknown as EasyPostShipmentShape,
        );
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) return null;
        throw error;
      }
    },
  };
}
