export { carrierWebhookPath, carrierWebhookRouter } from "./carrier-webhook";
export { createShippingProvider, publicBaseUrl, warehouseAddress } from "./create-shipping-provider";
export {
  createEasyPostCarrier,
  createEasyPostClient,
  easyPostReference,
  lazyEasyPostClient,
} from "./easypost-carrier";
export { createShipmentRepository } from "./prisma-shipment-repository";
export { createShipmentBooking, type ShippingDestinations } from "./shipment-booking";
export { createShippingDestinations, parseStoredAddress } from "./shipping-destinations";
export type { DeliveryOutcome, ShipmentRecord, ShipmentRef, ShipmentRepository } from "./shipment-repository";
export type { CarrierBooking, ShipmentRequest, ShippingAddress, ShippingProvider } from "./shipping-provider";
