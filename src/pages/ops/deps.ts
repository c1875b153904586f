import type { Catalog } from "../../inventory/catalog";
import type { CatalogCsv } from "../../inventory/catalog-csv";
import type { Logger } from "../../logger";
import type { EmailRenderer } from "../../notifications/email-renderer";
import type { OrderActions } from "../../orders/order-actions";
import type { OrderQueries } from "../../orders/order-queries";
import type { Reconciliation } from "../../reconciliation";
import type { ReturnActions } from "../../returns/returns";
import type { WebhookEndpoints } from "../../webhooks/endpoints";
import type { RunSource } from "./runs";
import type { OpsSessions } from "./session";

/** What the ops console stands on: the same use cases and query functions as the admin API. */
export interface OpsConsoleDeps {
  adminToken: string;
  /** Where a generated admin token was written (development without ADMIN_API_TOKEN): the login says so. */
  adminTokenFile?: string;
  sessions: OpsSessions;
  actions: OrderActions;
  queries: Pick<OrderQueries, "search" | "details" | "orderOfRun">;
  renderer: EmailRenderer;
  runs?: RunSource;
  /** Products and stock (/ops/products): the admin API's catalog use cases. */
  catalog?: Catalog;
  /** CSV export and import of the catalog (/ops/products/export.csv, /ops/products/import). */
  catalogCsv?: CatalogCsv;
  /** The daily reconciliation's reports (/ops/reconciliation). */
  reconciliation?: Reconciliation;
  /** Returns after delivery (/ops/orders/:id/returns): the admin API's return use cases. */
  returns?: ReturnActions;
  /** Webhook endpoints and their delivery log (/ops/webhooks): the admin API's use cases. */
  webhooks?: WebhookEndpoints;
  logger: Logger;
  /** Ops alerts not yet delivered to Slack: past `alertBannerAfterMs` of failing, every page says so. */
  alertBacklog?: () => Promise<{ undelivered: number; oldestFailingAt?: Date }>;
  alertBannerAfterMs?: number;
  /** Login attempts per client per minute. */
  loginRateLimit?: number;
}
