import path from "node:path";
import { inngestDevServerUrl, type Config } from "../config";
import { checkoutPayUrl } from "../payments/stripe-checkout";
import type { InventoryModule } from "../inventory/module";
import type { NotificationsModule } from "../notifications/module";
import type { OrdersModule } from "../orders/module";
import type { ReturnActions } from "../returns/returns";
import { durationMs } from "../shared/duration";
import type { ShippingModule } from "../shipping/module";
import {
  createOpsSessions,
  createRunSource,
  pagesRouter,
  type PagesDeps,
  type SessionRevocations,
} from "./index";

/**
 * The HTML pages (the customer's, the ops console, the dev inbox), composed in their own folder from
 * the use cases the domain modules built: the pages never touch the database.
 */
export function createPagesModule(shared: {
  config: Config;
  publicUrl: string;
  runUrlTemplate: string;
  /** Set when the local Inngest-compatible engine runs in place of Inngest: its runs are read there. */
  localEngineUrl: string | undefined;
  revocations: SessionRevocations;
  stripe: Parameters<typeof checkoutPayUrl>[0];
  orders: Pick<OrdersModule, "actions" | "queries" | "reviews" | "addresses">;
  notifications: Pick<NotificationsModule, "freshLinks" | "renderer" | "brand">;
  inventory: Pick<InventoryModule, "catalog" | "csv">;
  shipping: Pick<ShippingModule, "tracking">;
  returns: { actions: ReturnActions };
  logger: PagesDeps["logger"];
  links: PagesDeps["links"];
  adminToken: string;
  /** Where a generated admin token was written (development without ADMIN_API_TOKEN). */
  adminTokenFile: string | undefined;
  reconciliation: NonNullable<PagesDeps["reconciliation"]>;
  alertOutbox: { backlog: NonNullable<PagesDeps["alertBacklog"]> };
  /** Webhook endpoints and their delivery log, for /ops/webhooks (src/webhooks/module.ts). */
  webhooks: { endpoints: NonNullable<PagesDeps["webhooks"]> };
}) {
  const { config, runUrlTemplate, orders, notifications, adminToken } = shared;
  // INNGEST_DEV=1 means the dev server at its default address, never Inngest Cloud.
  const devServerUrl = inngestDevServerUrl(config);
  const runSource = shared.localEngineUrl
    ? createRunSource({ apiBase: shared.localEngineUrl, label: "the local engine", runUrlTemplate })
    : devServerUrl !== undefined
      ? createRunSource({ apiBase: devServerUrl, label: "the Inngest dev server", runUrlTemplate })
      : createRunSource({
          apiBase: config.INNGEST_BASE_URL ?? "https://api.inngest.com",
          ...(config.INNGEST_SIGNING_KEY ? { signingKey: config.INNGEST_SIGNING_KEY } : {}),
          label: "the Inngest REST API",
          runUrlTemplate,
        });
  return pagesRouter({
    logger: shared.logger,
    links: shared.links,
    adminToken,
    ...(shared.adminTokenFile ? { adminTokenFile: shared.adminTokenFile } : {}),
    reconciliation: shared.reconciliation,
    webhooks: shared.webhooks.endpoints,
    alertBacklog: () => shared.alertOutbox.backlog(),
    actions: orders.actions,
    queries: orders.queries,
    reviews: orders.reviews,
    addresses: orders.addresses,
    freshLinks: notifications.freshLinks,
    renderer: notifications.renderer,
    brand: notifications.brand,
    catalog: shared.inventory.catalog,
    catalogCsv: shared.inventory.csv,
    tracking: shared.shipping.tracking,
    returns: shared.returns.actions,
    sessions: createOpsSessions({
      adminToken,
      secure: shared.publicUrl.startsWith("https:"),
      revocations: shared.revocations,
    }),
    runs: runSource,
    alertBannerAfterMs: durationMs(config.ALERT_BANNER_AFTER),
    openCheckoutUrl: checkoutPayUrl(shared.stripe),
    ...(config.SMTP_URL === undefined && !config.isProduction
      ? { outboxDirectory: path.resolve(config.DATA_DIR, "outbox") }
      : {}),
  });
}
