import type { Config } from "../config";
import type { CarrierShipmentIds } from "./carrier-shipment-ids";
import { durationMs } from "../shared/duration";
import { createEasyPostCarrier, lazyEasyPostClient, type WarehouseAddress } from "./easypost-carrier";
import {
  createEasyPostRateQuoter,
  livePicksOf,
  type LiveRatePolicy,
  type LiveRateQuoter,
} from "./live-rates";
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
    ...(config.SHIPPING_BOX_IN ? { box: boxOf(config) } : {}),
  });
}

/** The parcels' box from SHIPPING_BOX_IN, when the shop set one. */
const boxOf = (config: Config) =>
  config.SHIPPING_BOX_IN
    ? {
        lengthIn: config.SHIPPING_BOX_IN[0],
        widthIn: config.SHIPPING_BOX_IN[1],
        heightIn: config.SHIPPING_BOX_IN[2],
      }
    : undefined;

/**
 * Live carrier rates for checkout (CHECKOUT_LIVE_RATES), or undefined when off. Its own client,
 * with CHECKOUT_LIVE_RATES_TIMEOUT: a customer waits on it, where a label's step waits 15 s.
 */
export function createLiveRates(
  config: Config,
  easyPost?: { apiKey: string; apiBase?: string },
): { quoter: LiveRateQuoter; policy: LiveRatePolicy } | undefined {
  const picks = livePicksOf(config.CHECKOUT_LIVE_RATES);
  if (picks.length === 0 || !easyPost) return undefined;
  return {
    quoter: createEasyPostRateQuoter({
      client: lazyEasyPostClient({ ...easyPost, timeoutMs: durationMs(config.CHECKOUT_LIVE_RATES_TIMEOUT) }),
      warehouse: warehouseAddress(config),
      box: boxOf(config),
    }),
    policy: {
      picks,
      markupPercent: config.CHECKOUT_LIVE_RATES_MARKUP_PERCENT,
      roundUpTo: config.CHECKOUT_LIVE_RATES_ROUND_UP_TO,
    },
  };
}
