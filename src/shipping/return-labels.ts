import {
  apiError,
  bookingOfShipment,
  claimShipment,
  refundStatusOf,
  shipmentToBuy,
  ShippingUnavailableError,
  toEasyPostAddress,
  type EasyPost,
  type WarehouseAddress,
} from "./easypost-carrier";
import type { CarrierShipmentIds } from "./carrier-shipment-ids";
import type { CarrierBooking, LabelRefundStatus, ShippingAddress } from "./shipping-provider";

/** The EasyPost return shipment's `reference`: a retry finds the label an earlier attempt bought. */
export const returnLabelReference = (returnId: string): string => `return-${returnId}`;
/** An exchange's outbound shipment: the new item, to the customer. */
export const exchangeReference = (returnId: string): string => `exchange-${returnId}`;

export interface ReturnLabelRequest {
  returnId: string;
  /** Where the customer ships from: the order's delivery address. */
  address: ShippingAddress;
  lines: readonly { sku: string; quantity: number; weightOz?: number | null }[];
}

/** Return labels: bought once per return, handed back when the return ends unused. */
export interface ReturnLabels {
  buy(request: ReturnLabelRequest): Promise<CarrierBooking>;
  /** The exchange's new item, warehouse to customer, once per return (reference `exchange-<returnId>`). */
  shipExchange(request: ReturnLabelRequest): Promise<CarrierBooking>;
  /**
   * EasyPost's refund_status after asking; `not-found` when no label was bought. The return
   * label unless `label` says the exchange's.
   */
  handBack(
    returnId: string,
    label?: "return" | "exchange",
  ): Promise<LabelRefundStatus | "not-found" | "not-voidable">;
}

/**
 * Return labels through EasyPost, as its docs describe them: the outbound shipment's own
 * addresses (to: the customer, from: the warehouse) with `is_return: true`, and EasyPost swaps
 * them on the label, so the parcel goes from the customer back to the warehouse. Its tracker is
 * the return's, found by the tracking number in the returns table, never among the outbound
 * parcels. Exactly once like the outbound label: the reference `return-<returnId>` is looked up
 * before anything is created or bought.
 */
export function createEasyPostReturnLabels(options: {
  client: () => Promise<EasyPost>;
  warehouse: WarehouseAddress;
  serviceLevels: readonly string[];
  itemWeightOz: number;
  /** Where the shipment each label is bought on is recorded before the buy (decision 0185). */
  shipmentIds?: CarrierShipmentIds;
}): ReturnLabels {
  const { warehouse, serviceLevels, itemWeightOz, shipmentIds } = options;

  /** Finds the shipment by its reference, or creates it; buys it unless bought already. */
  const purchase = async (reference: string, isReturn: boolean, request: ReturnLabelRequest) => {
    const client = await options.client();
    let shipment = await shipmentToBuy(client, shipmentIds, reference);
    if (shipment?.postage_label) return bookingOfShipment(shipment);
    if (!shipment) {
      shipment = await client.Shipment.create({
        reference,
        ...(isReturn ? { is_return: true } : {}),
        to_address: toEasyPostAddress(request.address),
        from_address: toEasyPostAddress(warehouse),
        parcel: {
          weight: request.lines.reduce(
            (sum, line) => sum + line.quantity * (line.weightOz ?? itemWeightOz),
            0,
          ),
        },
        options: { label_format: "PNG", print_custom_1: reference },
      });
    }
    shipment = await claimShipment(client, shipmentIds, reference, shipment);
    if (shipment.postage_label) return bookingOfShipment(shipment);
    const cheapest = (shipment.rates ?? [])
      .filter((rate) => serviceLevels.includes(rate.service))
      .sort((a, b) => Number(a.rate) - Number(b.rate))[0];
    if (!cheapest) {
      throw new ShippingUnavailableError(
        `EasyPost shipment ${shipment.id}: no rate for ${serviceLevels.join("/")}`,
      );
    }
    try {
      return bookingOfShipment(await client.Shipment.buy(shipment.id, cheapest.id));
    } catch (error) {
      if (apiError(error).code === "SHIPMENT.POSTAGE.EXISTS")
        return bookingOfShipment(await client.Shipment.retrieve(shipment.id));
      throw error;
    }
  };

  return {
    buy: (request) => purchase(returnLabelReference(request.returnId), true, request),
    shipExchange: (request) => purchase(exchangeReference(request.returnId), false, request),

    async handBack(returnId, label = "return") {
      const client = await options.client();
      const reference = label === "exchange" ? exchangeReference(returnId) : returnLabelReference(returnId);
      const shipment = await shipmentToBuy(client, shipmentIds, reference);
      if (!shipment?.postage_label) return "not-found";
      const known = refundStatusOf(shipment);
      if (known === "submitted" || known === "refunded" || known === "not_applicable") return known;
      try {
        return refundStatusOf(await client.Shipment.refund(shipment.id)) ?? "not-voidable";
      } catch (error) {
        const status = apiError(error).statusCode;
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) return "not-voidable";
        throw error;
      }
    },
  };
}
