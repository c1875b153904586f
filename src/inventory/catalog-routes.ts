import { Router, type Response } from "express";
import type { z } from "zod";
import { AppError } from "../errors";
import { requireBearerToken } from "../http/bearer-auth";
import type { Catalog } from "./catalog";
import type { CatalogCsv } from "./catalog-csv";
import {
  createProductBody,
  describeIssues,
  importBody,
  skuSchema,
  stockChangeBody,
  stockPageQuery,
  updateProductBody,
  type Product,
} from "./product-schemas";

/** The request part against its schema, or 400 validation_failed naming every bad field. */
export function parseOr400<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const { message, fields } = describeIssues(parsed.error);
  throw new AppError("validation_failed", message, { details: { fields } });
}

function skuParam(value: unknown): string {
  const parsed = skuSchema.safeParse(value);
  if (!parsed.success) throw new AppError("product_not_found", `Product ${String(value)} does not exist`);
  return parsed.data;
}

/** If-Match: "3", W/"3" or *; the version the client read, or undefined for none or any. */
export function versionOfIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === "*") return undefined;
  const match = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(header);
  if (!match)
    throw new AppError("validation_failed", 'If-Match must be the ETag of the product, e.g. "3"', {
      details: { fields: ["If-Match"] },
    });
  return Number(match[1]);
}

const sendProduct = (res: Response, product: Product, status = 200) => {
  res.status(status).set("ETag", `"${product.version}"`).json(product);
};

/**
 * The catalog's admin API, /api/admin/products: a thin door over the catalog's use cases, the
 * same ones the ops console calls. Every body is checked by its schema in product-schemas.ts,
 * which GET /openapi.json publishes.
 */
export function catalogAdminRoutes(deps: { adminToken: string; catalog: Catalog; csv?: CatalogCsv }): Router {
  const { catalog, csv } = deps;
  const router = Router();
  router.use(requireBearerToken(deps.adminToken));

  if (csv) {
    // Before /:sku, which would take "export.csv" for a SKU.
    router.get("/export.csv", async (_req, res) => {
      res
        .type("text/csv")
        .set("Content-Disposition", 'attachment; filename="products.csv"')
        .send(await csv.exportCsv());
    });
    router.post("/import", async (req, res) => {
      const body = parseOr400(importBody, req.body ?? {});
      const result = await csv.importCsv(body.csv, { dryRun: body.dryRun ?? false, by: "admin-api" });
      res.status(body.dryRun ? 200 : 201).json(result);
    });
  }

  router.get("/", async (req, res) => {
    const query = req.query as Record<string, unknown>;
    res.json({
      products: await catalog.list({
        includeArchived: query.archived === "include",
        lowOnly: query.low === "true",
      }),
    });
  });

  router.post("/", async (req, res) => {
    const body = parseOr400(createProductBody, req.body ?? {});
    const product = await catalog.create(body, "admin-api");
    res.location(`/api/admin/products/${encodeURIComponent(product.sku)}`);
    sendProduct(res, product, 201);
  });

  router.get("/:sku", async (req, res) => {
    const sku = skuParam(req.params.sku);
    const product = await catalog.get(sku);
    if (!product) throw new AppError("product_not_found", `Product ${sku} does not exist`);
    sendProduct(res, product);
  });

  router.patch("/:sku", async (req, res) => {
    const sku = skuParam(req.params.sku);
    const expectedVersion = versionOfIfMatch(req.get("if-match"));
    const body = parseOr400(updateProductBody, req.body ?? {});
    const product = await catalog.update(sku, body, {
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
      by: "admin-api",
    });
    sendProduct(res, product);
  });

  router.post("/:sku/stock", async (req, res) => {
    const sku = skuParam(req.params.sku);
    const body = parseOr400(stockChangeBody, req.body ?? {});
    res.status(201).json(await catalog.changeStock(sku, body, "admin-api"));
  });

  router.get("/:sku/stock", async (req, res) => {
    const sku = skuParam(req.params.sku);
    const query = parseOr400(stockPageQuery, req.query);
    const limit = Math.min(Math.max(Number(query.limit ?? 50), 1), 200);
    if (!(await catalog.get(sku))) throw new AppError("product_not_found", `Product ${sku} does not exist`);
    res.json(await catalog.ledger.page(sku, { limit, ...(query.before ? { before: query.before } : {}) }));
  });

  return router;
}
