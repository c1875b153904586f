export { createEasyPostLedger, type CarrierLedger, type CarrierShipment } from "./carrier-ledger";
export {
  createReconciliation,
  mismatchKinds,
  type Mismatch,
  type MismatchKind,
  type Reconciliation,
  type ReconciliationActor,
  type ReconciliationReport,
  type ReconciliationSummary,
} from "./reconcile";
export { reconciliationAdminRoutes } from "./admin-routes";
export { dateIn, previousShopDay, shopDay, type ShopDay } from "./shop-day";
export { createStripeLedger, type StripeLedger } from "./stripe-ledger";
