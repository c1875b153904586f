export { carrierSignature, verifyCarrierSignature } from "./carrier-signature";
export {
  carrierWebhookPath,
  carrierWebhookRouter,
  shipmentDeliveredEventId,
  type ShipmentDeliveredEvent,
} from "./carrier-webhook";
export { createShippingProvider, publicBaseUrl } from "./create-shipping-provider";
export { createShipmentRepository } from "./prisma-shipment-repository";
export { createSandboxCarrier, sandboxTrackingNumber, type SandboxCarrier } from "./sandbox-carrier";
export { createShipmentBooking } from "./shipment-booking";
export type { DeliveryOutcome, ShipmentRecord, ShipmentRef, ShipmentRepository } from "./shipment-repository";
export type { CarrierBooking, ShipmentRequest, ShippingAddress, ShippingProvider } from "./shipping-provider";
