import type { Config } from "../config";
import type { CarrierShipmentIds } from "./carrier-shipment-ids";
import { createEasyPostCarrier, lazyEasyPostClient, type WarehouseAddress } from "./easypost-carrier";
import type { ShippingProvider } from "./shipping-provider";

/** Where customers reach the shop: PUBLIC_URL, or this process itself when it is unset. */
export function publicBaseUrl(config: Config): string {
  return config.PUBLIC_URL ?? `http://localhost:${config.PORT}`;
}

/** A demo warehouse for development only: production requires WAREHOUSE_* (config.ts). */
const developmentWarehouse: WarehouseAddress = {
  name: "Shop Warehouse (development)",
  line1: "417 Montgomery St",
  line2: "Floor 5",
  city: "San Francisco",
  state: "CA",
  postalCode: "94104",
  country: "US",
  phone: "4155550100",
};

export function warehouseAddress(config: Config): WarehouseAddress {
  if (!config.WAREHOUSE_STREET1) return developmentWarehouse;
  return {
    name: config.WAREHOUSE_NAME ?? "Shop Warehouse",
    line1: config.WAREHOUSE_STREET1,
    ...(config.WAREHOUSE_STREET2 ? { line2: config.WAREHOUSE_STREET2 } : {}),
    city: config.WAREHOUSE_CITY ?? "",
    ...(config.WAREHOUSE_STATE ? { state: config.WAREHOUSE_STATE } : {}),
    postalCode: config.WAREHOUSE_ZIP ?? "",
    country: config.WAREHOUSE_COUNTRY ?? "US",
    ...(config.WAREHOUSE_PHONE ? { phone: config.WAREHOUSE_PHONE } : {}),
  };
}

/** EasyPost: the real API, or its stand-in in development and tests (the same code path either way). */
export function createShippingProvider(
  config: Config,
  easyPost?: { apiKey: string; apiBase?: string },
  shipmentIds?: CarrierShipmentIds,
): ShippingProvider {
  if (!easyPost) throw new Error("shipping needs EASYPOST_API_KEY (or the EasyPost stand-in)");
  return createEasyPostCarrier({
    client: lazyEasyPostClient(easyPost),
    warehouse: warehouseAddress(config),
    serviceLevels: config.SHIPPING_SERVICE_LEVEL.split(","),
    itemWeightOz: config.SHIPPING_ITEM_WEIGHT_OZ,
    ...(shipmentIds ? { shipmentIds } : {}),
    ...(config.SHIPPING_BOX_IN
      ? {
          box: {
            lengthIn: config.SHIPPING_BOX_IN[0],
            widthIn: config.SHIPPING_BOX_IN[1],
            heightIn: config.SHIPPING_BOX_IN[2],
          },
        }
      : {}),
  });
}
