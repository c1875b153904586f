import path from "node:path";
import { Router } from "express";
import type { Catalog } from "../inventory/catalog";
import type { CatalogCsv } from "../inventory/catalog-csv";
import type { Logger } from "../logger";
import type { EmailRenderer } from "../notifications/email-renderer";
import type { FreshLinks } from "../notifications/fresh-link";
import type { AddressCorrections } from "../orders/correct-address";
import type { OrderActions } from "../orders/order-actions";
import type { OrderQueries } from "../orders/order-queries";
import type { Reviews } from "../orders/review-order";
import type { Reconciliation } from "../reconciliation";
import type { WebhookEndpoints } from "../webhooks/endpoints";
import type { ReturnActions } from "../returns/returns";
import type { ParcelTracking } from "../shipping/parcel-tracking";
import { apiReferencePage } from "./api-reference";
import { customerPages } from "./customer/routes";
import { Layout, htmxPath, sendPage, styles, stylesPath } from "./layout";
import type { CustomerLinks } from "./links";
import { opsConsole, type OpsConsoleDeps } from "./ops/routes";
import type { RunSource } from "./ops/runs";
import type { OpsSessions } from "./ops/session";
import { devOutbox } from "./outbox/routes";
import { brandStylesheet, defaultBrand, type Brand } from "../shared/brand";

export { createCustomerLinks, deriveLinkSecret, type CustomerLinks } from "./links";
export { createRunSource, type RunSource } from "./ops/runs";
export { createMemorySessionRevocations, createOpsSessions, type SessionRevocations } from "./ops/session";
/** Every door's dependencies are use cases and query functions: the pages never touch the database. */
export interface PagesDeps {
  logger: Logger;
  actions: OrderActions;
  queries: OrderQueries;
  reviews: Reviews;
  tracking: ParcelTracking;
  links: CustomerLinks;
  freshLinks: FreshLinks;
  adminToken: string;
  /** Where a generated admin token was written (development without ADMIN_API_TOKEN): the login says so. */
  adminTokenFile?: string;
  sessions: OpsSessions;
  renderer: EmailRenderer;
  runs?: RunSource;
  /** The catalog's use cases: /ops/products. */
  catalog?: Catalog;
  /** CSV export and import in the console (the admin API's). */
  catalogCsv?: CatalogCsv;
  reconciliation?: Reconciliation;
  /** Webhook endpoints and their delivery log (/ops/webhooks). */
  webhooks?: WebhookEndpoints;
  openCheckoutUrl?: (checkoutSessionId: string) => Promise<string | undefined>;
  alertBacklog?: OpsConsoleDeps["alertBacklog"];
  alertBannerAfterMs?: number;
  addresses?: AddressCorrections;
  /** Returns after delivery: the customer's return form and the console's returns. */
  returns?: ReturnActions;
  /** The outbox directory, when e-mails go there (no SMTP_URL, never in production). */
  outboxDirectory?: string;
  /** The shop's name, logo, colour, support and footer (SHOP_* configuration); a neutral default. */
  brand?: Brand;
}

/** What a return form may offer instead of the money: physical products on sale and in stock. */
const exchangeOptionsOf = (catalog: Catalog) => async () =>
  (await catalog.list()).filter(
    (product) => !product.digital && !product.archived && product.stockOnHand > 0,
  );

/** Served from node_modules, so `npm start` and the production image need no front-end build. */
const htmxFile = path.join(path.dirname(require.resolve("htmx.org/package.json")), "dist", "htmx.min.js");

/** Every HTML page: the customer's, the ops console and (development only) the dev inbox. */
export function pagesRouter(deps: PagesDeps): Router {
  const router = Router();
  const brand = deps.brand ?? defaultBrand;
  const brandCss = brandStylesheet(brand);
  router.use((_req, res, next) => {
    res.locals.brand = brand;
    next();
  });
  router.get(brandCss.path, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.type("css").send(brandCss.css);
  });
  router.get(htmxPath, (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=86400");
    res.sendFile(htmxFile);
  });
  router.get(stylesPath, (_req, res) => {
    // Named by its content: a new stylesheet is a new path.
    res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
    res.type("css").send(styles);
  });
  router.get("/", (_req, res) => {
    sendPage(
      res,
      <Layout title="order-fulfillment" brand="order-fulfillment" narrow>
        <h1>order-fulfillment</h1>
        <div class="card">
          <p>Turns a paid Stripe Checkout into a shipped, confirmed and reviewed order, exactly once.</p>
          <ul>
            <li>
              <a href="/ops">Ops console</a>: orders, runs, actions
            </li>
            {deps.outboxDirectory ? (
              <li>
                <a href="/dev/outbox">Dev inbox</a>: the e-mails written to the outbox
              </li>
            ) : null}
            <li>
              <a href="/api/products">Products</a> (JSON); start a checkout with{" "}
              <code>POST /api/checkout</code>
            </li>
            <li>
              <a href="/api-docs">API reference</a> (<a href="/openapi.json">OpenAPI 3.1</a>)
            </li>
          </ul>
        </div>
      </Layout>,
    );
  });
  router.use(apiReferencePage());
  router.use(
    customerPages({
      queries: deps.queries,
      reviews: deps.reviews,
      tracking: deps.tracking,
      links: deps.links,
      freshLinks: deps.freshLinks,
      ...(deps.openCheckoutUrl ? { openCheckoutUrl: deps.openCheckoutUrl } : {}),
      ...(deps.addresses ? { addresses: deps.addresses } : {}),
      ...(deps.returns ? { returns: deps.returns } : {}),
      ...(deps.catalog ? { exchangeOptions: exchangeOptionsOf(deps.catalog) } : {}),
    }),
  );
  router.use(
    opsConsole({
      adminToken: deps.adminToken,
      ...(deps.adminTokenFile ? { adminTokenFile: deps.adminTokenFile } : {}),
      sessions: deps.sessions,
      actions: deps.actions,
      queries: deps.queries,
      renderer: deps.renderer,
      ...(deps.runs ? { runs: deps.runs } : {}),
      ...(deps.alertBacklog ? { alertBacklog: deps.alertBacklog } : {}),
      ...(deps.alertBannerAfterMs !== undefined ? { alertBannerAfterMs: deps.alertBannerAfterMs } : {}),
      ...(deps.catalog ? { catalog: deps.catalog } : {}),
      ...(deps.catalogCsv ? { catalogCsv: deps.catalogCsv } : {}),
      ...(deps.reconciliation ? { reconciliation: deps.reconciliation } : {}),
      ...(deps.returns ? { returns: deps.returns } : {}),
      ...(deps.webhooks ? { webhooks: deps.webhooks } : {}),
      logger: deps.logger,
    }),
  );
  if (deps.outboxDirectory) router.use(devOutbox({ directory: deps.outboxDirectory }));
  return router;
}
