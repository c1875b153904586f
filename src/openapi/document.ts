import type { RequestHandler } from "express";
import { z } from "zod";
import { httpStatusByCode, type ErrorCode } from "../errors";
import {
  createProductBody,
  importBody,
  importResultSchema,
  productListSchema,
  productSchema,
  publicProductListSchema,
  stockChangeBody,
  stockMovementSchema,
  stockPageQuery,
  stockPageSchema,
  updateProductBody,
} from "../inventory/product-schemas";
import { checkoutRequestSchema, checkoutResultSchema } from "../orders/checkout/checkout-request";
import {
  createReturnBody,
  receiveReturnBody,
  returnDecisionBody,
  returnListSchema,
  returnSchema,
} from "../returns/return-schemas";
import { createEndpointBody, rotateSecretBody, updateEndpointBody } from "../webhooks/endpoints";
import {
  webhookDeliveryListSchema,
  webhookDeliverySchema,
  webhookEndpointListSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  webhookSendAgainSchema,
} from "../webhooks/webhook-schemas";

/**
 * GET /openapi.json: the API contract, built from the zod schemas the routes validate with (one
 * source: a schema changed for a route changes its contract), by zod 4's own z.toJSONSchema.
 * OpenAPI 3.1 schemas are JSON Schema 2020-12, which is what z.toJSONSchema writes; its `$defs`
 * (the schemas named with `.meta({ id })`) become `components.schemas`.
 * Routes whose answers are read models without a zod schema (the order views) are documented as
 * objects; their requests and errors are exact.
 */

type JsonSchema = Record<string, unknown>;
const components: Record<string, JsonSchema> = {};

/** A zod schema as an OpenAPI schema, its named parts moved to components.schemas. */
function schemaOf(schema: z.ZodType, io: "input" | "output" = "output"): JsonSchema {
  const {
    $schema: _dialect,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, {
    io,
    target: "draft-2020-12",
    unrepresentable: "any",
  }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  for (const [name, definition] of Object.entries($defs ?? {}))
    components[name] = rewriteRefs(definition) as JsonSchema;
  return rewriteRefs(rest) as JsonSchema;
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === "$ref" && typeof inner === "string"
        ? inner.replace("#/$defs/", "#/components/schemas/")
        : rewriteRefs(inner),
    ]),
  );
}

const errorSchema = (codes: readonly ErrorCode[]): JsonSchema => ({
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", enum: [...codes] },
        message: { type: "string" },
        details: {},
      },
    },
  },
});

const json = (schema: JsonSchema, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** Every error status of a route, each with the codes it answers. */
function errors(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  // Every route can fail on our side, and refuse a body it cannot parse.
  for (const code of [...codes, "internal_error", "service_unavailable"] as ErrorCode[]) {
    const status = httpStatusByCode[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [String(status), json(errorSchema(list), list.join(", "))]),
  );
}

const bodyErrors: ErrorCode[] = [
  "invalid_json",
  "payload_too_large",
  "unsupported_media_type",
  "bad_request",
];
const adminErrors: ErrorCode[] = ["unauthorized", "rate_limited"];
const anyObject: JsonSchema = { type: "object" };
const skuParameter = {
  name: "sku",
  in: "path",
  required: true,
  schema: schemaOf(z.string()),
};
const uuidParameter = (name: string) => ({
  name,
  in: "path",
  required: true,
  schema: { type: "string", format: "uuid" },
});
const queryParameters = (schema: z.ZodObject) =>
  Object.entries(schema.shape).map(([name, field]) => ({
    name,
    in: "query",
    required: false,
    schema: schemaOf(field as z.ZodType, "input"),
  }));
const requestBody = (schema: z.ZodType) => ({
  required: true,
  content: { "application/json": { schema: schemaOf(schema, "input") } },
});
const admin = { security: [{ adminToken: [] }] };
const etag = { ETag: { description: "The product's version, for If-Match", schema: { type: "string" } } };

function buildDocument(): JsonSchema {
  const paths = {
    "/api/products": {
      get: {
        summary: "The catalog: what can be bought",
        tags: ["public"],
        responses: { "200": json(schemaOf(publicProductListSchema), "Products on sale"), ...errors([]) },
      },
    },
    "/api/checkout": {
      post: {
        summary: "Start a Stripe Checkout for a cart (the shop's backend, with CHECKOUT_API_TOKEN)",
        tags: ["public"],
        description:
          "Prices come from the catalog. With SHIPPING_RATE_TABLE the cart needs a destination the table covers " +
          "(its rates become the session's shipping options). With a `destination` and live carrier rates on " +
          "(CHECKOUT_LIVE_RATES), the shipping options are EasyPost's rates for the order's parcels that the " +
          "shop's policy keeps (cheapest, fastest), marked up and rounded, each with its delivery estimate; the " +
          "rate table is offered instead when no destination is given, EasyPost is unavailable or rates nothing " +
          "there (a destination neither rates: 422 shipping_destination_not_covered; EasyPost unavailable with no " +
          "table: 503 service_unavailable). With CHECKOUT_AUTOMATIC_TAX Stripe Tax computes " +
          "the tax from each product's taxCode (or CHECKOUT_DEFAULT_TAX_CODE; neither: 422 tax_code_required), " +
          "on prices that exclude or include tax per CHECKOUT_TAX_BEHAVIOR; with CHECKOUT_ALLOW_PROMOTION_CODES " +
          "the customer may enter a Stripe promotion code on Checkout's page. A total under Stripe's minimum " +
          "charge for the currency (the lines plus the preselected shipping option): 422 amount_too_small. " +
          "Nothing is created on a 4xx, except that when Stripe itself refuses the session the order " +
          "written before the call is left expired (docs/checkout.md).",
        security: [{ checkoutToken: [] }, {}],
        parameters: [
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            schema: { type: "string", maxLength: 255 },
          },
        ],
        requestBody: requestBody(checkoutRequestSchema),
        responses: {
          "201": json(schemaOf(checkoutResultSchema), "A payable Checkout Session"),
          ...errors([
            ...bodyErrors,
            "validation_failed",
            "empty_order",
            "invalid_quantity",
            "invalid_email",
            "unknown_sku",
            "unauthorized",
            "insufficient_stock",
            "product_unavailable",
            "conflict",
            "idempotency_key_reused",
            "shipping_destination_required",
            "shipping_destination_not_covered",
            "tax_code_required",
            "amount_too_small",
          ]),
        },
      },
    },
    "/api/stripe/webhook": {
      post: {
        summary: "Stripe's webhook (signed with STRIPE_WEBHOOK_SECRET)",
        tags: ["webhooks"],
        requestBody: { required: true, content: { "application/json": { schema: anyObject } } },
        responses: {
          "200": json(
            { type: "object", required: ["received"], properties: { received: { const: true } } },
            "Handled",
          ),
          ...errors([...bodyErrors, "invalid_signature"]),
        },
      },
    },
    "/api/carrier/webhook": {
      post: {
        summary: "EasyPost's tracker webhook (HMAC-signed)",
        tags: ["webhooks"],
        requestBody: { required: true, content: { "application/json": { schema: anyObject } } },
        responses: {
          "200": json(anyObject, "Handled"),
          ...errors([...bodyErrors, "invalid_signature", "validation_failed"]),
        },
      },
    },
    "/healthz": {
      get: { summary: "Liveness", tags: ["operations"], responses: { "200": json(anyObject, "Alive") } },
    },
    "/readyz": {
      get: {
        summary: "Readiness (the database answers)",
        tags: ["operations"],
        responses: { "200": json(anyObject, "Ready"), ...errors(["not_ready"]) },
      },
    },
    "/openapi.json": {
      get: {
        summary: "This document",
        tags: ["operations"],
        responses: { "200": json(anyObject, "OpenAPI 3.1") },
      },
    },
    "/api/orders": {
      get: {
        ...admin,
        summary: "Search orders (status, attention, q, cursor, limit)",
        tags: ["orders"],
        responses: {
          "200": json(anyObject, "A page of orders"),
          ...errors([...adminErrors, "validation_failed"]),
        },
      },
    },
    "/api/orders/{id}": {
      get: {
        ...admin,
        summary:
          "An order with its lines, its money as Stripe charged it (`money`: subtotal, shipping, discount, tax, total, the chosen shipping rate and per line; null for an order without a recorded breakdown), payment, shipment (each label with `labelCost` in minor units and `labelCurrency`, what EasyPost charged for it; null before they were recorded), e-mails and timeline",
        tags: ["orders"],
        parameters: [uuidParameter("id")],
        responses: { "200": json(anyObject, "The order"), ...errors([...adminErrors, "order_not_found"]) },
      },
    },
    "/api/orders/{id}/cancel": {
      post: {
        ...admin,
        summary: "Cancel an order",
        tags: ["orders"],
        parameters: [uuidParameter("id")],
        responses: {
          "202": json(anyObject, "Cancellation requested"),
          ...errors([
            ...adminErrors,
            ...bodyErrors,
            "validation_failed",
            "order_not_found",
            "order_not_cancellable",
          ]),
        },
      },
    },
    "/api/orders/{id}/refund": {
      post: {
        ...admin,
        summary: "Refund an order, whole or in part",
        tags: ["orders"],
        parameters: [uuidParameter("id")],
        responses: {
          "201": json(anyObject, "Refund requested"),
          ...errors([
            ...adminErrors,
            ...bodyErrors,
            "validation_failed",
            "order_not_found",
            "order_not_refundable",
            "refund_exceeds_captured",
            "charge_disputed",
            "upstream_unavailable",
          ]),
        },
      },
    },
    "/api/orders/{id}/redrive": {
      post: {
        ...admin,
        summary: "Start the order's fulfilment again",
        tags: ["orders"],
        parameters: [uuidParameter("id")],
        responses: {
          "202": json(anyObject, "Re-drive requested"),
          ...errors([...adminErrors, "order_not_found", "order_not_redrivable"]),
        },
      },
    },
    "/api/orders/{id}/shipments/{shipmentId}/reship": {
      post: {
        ...admin,
        summary: "Re-ship one parcel: a new label and tracking e-mail, the old label handed back",
        tags: ["orders"],
        parameters: [uuidParameter("id"), uuidParameter("shipmentId")],
        responses: {
          "201": json(anyObject, "Re-shipped (repeated: the re-ship already made, nothing new bought)"),
          ...errors([
            ...adminErrors,
            "order_not_found",
            "shipment_not_found",
            "order_not_shipped",
            "parcel_delivered",
            "reship_in_progress",
          ]),
        },
      },
    },
    "/api/orders/{id}/emails/{emailId}/resend": {
      post: {
        ...admin,
        summary: "Send one of the order's e-mails again",
        tags: ["orders"],
        parameters: [uuidParameter("id"), uuidParameter("emailId")],
        responses: {
          "201": json(anyObject, "Re-sent"),
          ...errors([...adminErrors, "order_not_found", "not_found"]),
        },
      },
    },
    "/api/orders/{id}/returns": {
      post: {
        ...admin,
        summary:
          "Create a return of a delivered order's lines (approved at once; process-return buys and e-mails its label)",
        tags: ["returns"],
        parameters: [uuidParameter("id")],
        requestBody: requestBody(createReturnBody),
        responses: {
          "201": json(schemaOf(returnSchema), "The return"),
          ...errors([
            ...adminErrors,
            ...bodyErrors,
            "validation_failed",
            "order_not_found",
            "return_line_invalid",
            "return_quantity_exceeded",
            "order_not_returnable",
            "return_window_closed",
            "exchange_sku_invalid",
            "exchange_needs_saved_card",
            "insufficient_stock",
            "upstream_unavailable",
          ]),
        },
      },
      get: {
        ...admin,
        summary: "The order's returns, newest first",
        tags: ["returns"],
        parameters: [uuidParameter("id")],
        responses: {
          "200": json(schemaOf(returnListSchema), "The returns"),
          ...errors([...adminErrors, "order_not_found"]),
        },
      },
    },
    "/api/returns/{id}": {
      get: {
        ...admin,
        summary: "A return",
        tags: ["returns"],
        parameters: [uuidParameter("id")],
        responses: {
          "200": json(schemaOf(returnSchema), "The return"),
          ...errors([...adminErrors, "return_not_found"]),
        },
      },
    },
    ...Object.fromEntries(
      (
        [
          ["approve", "Approve a requested return: its label is bought and e-mailed"],
          ["reject", "Reject a return (before its refund): no refund, an unused label handed back"],
          ["close", "Close a return whose parcel is not coming: the unused label handed back"],
        ] as const
      ).map(([action, summary]) => [
        `/api/returns/{id}/${action}`,
        {
          post: {
            ...admin,
            summary,
            tags: ["returns"],
            parameters: [uuidParameter("id")],
            requestBody: requestBody(returnDecisionBody),
            responses: {
              "200": json(schemaOf(returnSchema), "The return"),
              ...errors([
                ...adminErrors,
                ...bodyErrors,
                "validation_failed",
                "return_not_found",
                "return_not_actionable",
              ]),
            },
          },
        },
      ]),
    ),
    "/api/returns/{id}/receive": {
      post: {
        ...admin,
        summary:
          "The parcel is back: refunded less the restocking fee, restocked (resellable) or written off (damaged)",
        tags: ["returns"],
        parameters: [uuidParameter("id")],
        requestBody: requestBody(receiveReturnBody),
        responses: {
          "200": json(schemaOf(returnSchema), "The return"),
          ...errors([
            ...adminErrors,
            ...bodyErrors,
            "validation_failed",
            "return_not_found",
            "return_not_actionable",
          ]),
        },
      },
    },
    "/api/admin/products": {
      get: {
        ...admin,
        summary: "Every product (archived=include adds archived ones; low=true only low stock)",
        tags: ["catalog"],
        parameters: [
          { name: "archived", in: "query", required: false, schema: { type: "string", enum: ["include"] } },
          { name: "low", in: "query", required: false, schema: { type: "string", enum: ["true"] } },
        ],
        responses: { "200": json(schemaOf(productListSchema), "Products by SKU"), ...errors(adminErrors) },
      },
      post: {
        ...admin,
        summary: "Create a product (its opening stock is the ledger's first row)",
        tags: ["catalog"],
        requestBody: requestBody(createProductBody),
        responses: {
          "201": { ...json(schemaOf(productSchema), "The product"), headers: etag },
          ...errors([...adminErrors, ...bodyErrors, "validation_failed", "product_exists"]),
        },
      },
    },
    "/api/admin/products/export.csv": {
      get: {
        ...admin,
        summary: "Every product and its stock as CSV (the import's columns)",
        tags: ["catalog"],
        responses: {
          "200": { description: "products.csv", content: { "text/csv": { schema: { type: "string" } } } },
          ...errors(adminErrors),
        },
      },
    },
    "/api/admin/products/import": {
      post: {
        ...admin,
        summary: "Import products and stock counts from CSV: all or nothing, or a dry run",
        tags: ["catalog"],
        requestBody: requestBody(importBody),
        responses: {
          "200": json(schemaOf(importResultSchema), "Dry run: what would change"),
          "201": json(schemaOf(importResultSchema), "Imported"),
          ...errors([...adminErrors, ...bodyErrors, "validation_failed", "conflict"]),
        },
      },
    },
    "/api/admin/products/{sku}": {
      get: {
        ...admin,
        summary: "A product",
        tags: ["catalog"],
        parameters: [skuParameter],
        responses: {
          "200": { ...json(schemaOf(productSchema), "The product"), headers: etag },
          ...errors([...adminErrors, "product_not_found"]),
        },
      },
      patch: {
        ...admin,
        summary: "Edit or archive a product; If-Match (or version) refuses a stale edit",
        tags: ["catalog"],
        parameters: [
          skuParameter,
          { name: "If-Match", in: "header", required: false, schema: { type: "string" } },
        ],
        requestBody: requestBody(updateProductBody),
        responses: {
          "200": { ...json(schemaOf(productSchema), "The product as edited"), headers: etag },
          ...errors([
            ...adminErrors,
            ...bodyErrors,
            "validation_failed",
            "product_not_found",
            "version_conflict",
            "currency_locked",
          ]),
        },
      },
    },
    "/api/admin/products/{sku}/stock": {
      get: {
        ...admin,
        summary: "The product's stock ledger, newest first",
        tags: ["catalog"],
        parameters: [skuParameter, ...queryParameters(stockPageQuery)],
        responses: {
          "200": json(schemaOf(stockPageSchema), "A page of movements"),
          ...errors([...adminErrors, "validation_failed", "product_not_found"]),
        },
      },
      post: {
        ...admin,
        summary: "Record a stock movement: { delta } or { count }, a reason and a note",
        tags: ["catalog"],
        parameters: [skuParameter],
        requestBody: requestBody(stockChangeBody),
        responses: {
          "201": json(schemaOf(stockMovementSchema), "The movement"),
          ...errors([
            ...adminErrors,
            ...bodyErrors,
            "validation_failed",
            "product_not_found",
            "insufficient_stock",
          ]),
        },
      },
    },
    "/api/admin/webhook-endpoints": {
      get: {
        ...admin,
        summary: "Every webhook endpoint (docs/webhooks.md); secrets are never shown again",
        tags: ["webhooks"],
        responses: {
          "200": json(schemaOf(webhookEndpointListSchema), "The endpoints"),
          ...errors(adminErrors),
        },
      },
      post: {
        ...admin,
        summary:
          "Register an endpoint for lifecycle event types (also from the console's Webhooks page); the answer holds its secret, shown once",
        tags: ["webhooks"],
        requestBody: requestBody(createEndpointBody),
        responses: {
          "201": json(schemaOf(webhookEndpointWithSecretSchema), "The endpoint and its secret"),
          ...errors([...adminErrors, ...bodyErrors, "validation_failed"]),
        },
      },
    },
    "/api/admin/webhook-endpoints/{id}": {
      get: {
        ...admin,
        summary: "A webhook endpoint",
        tags: ["webhooks"],
        parameters: [uuidParameter("id")],
        responses: {
          "200": json(schemaOf(webhookEndpointSchema), "The endpoint"),
          ...errors([...adminErrors, "not_found"]),
        },
      },
      patch: {
        ...admin,
        summary: "Change an endpoint's URL, event types or description; enable or disable it",
        tags: ["webhooks"],
        parameters: [uuidParameter("id")],
        requestBody: requestBody(updateEndpointBody),
        responses: {
          "200": json(schemaOf(webhookEndpointSchema), "The endpoint as changed"),
          ...errors([...adminErrors, ...bodyErrors, "validation_failed", "not_found"]),
        },
      },
      delete: {
        ...admin,
        summary: "Delete an endpoint and its delivery log; its pending retries stop",
        tags: ["webhooks"],
        parameters: [uuidParameter("id")],
        responses: { "204": { description: "Deleted" }, ...errors([...adminErrors, "not_found"]) },
      },
    },
    "/api/admin/webhook-endpoints/{id}/rotate-secret": {
      post: {
        ...admin,
        summary:
          "A new secret, shown once; the previous one keeps signing beside it for the overlap (WEBHOOK_SECRET_OVERLAP)",
        tags: ["webhooks"],
        parameters: [uuidParameter("id")],
        requestBody: requestBody(rotateSecretBody),
        responses: {
          "200": json(schemaOf(webhookEndpointWithSecretSchema), "The endpoint and its new secret"),
          ...errors([...adminErrors, ...bodyErrors, "validation_failed", "not_found"]),
        },
      },
    },
    "/api/admin/webhook-endpoints/{id}/deliveries": {
      get: {
        ...admin,
        summary: "The endpoint's delivery log, newest first: each delivery with its attempts",
        tags: ["webhooks"],
        parameters: [
          uuidParameter("id"),
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 200 },
          },
        ],
        responses: {
          "200": json(schemaOf(webhookDeliveryListSchema), "Deliveries"),
          ...errors([...adminErrors, "validation_failed", "not_found"]),
        },
      },
    },
    "/api/admin/webhook-deliveries/{id}": {
      get: {
        ...admin,
        summary: "A delivery with its attempts",
        tags: ["webhooks"],
        parameters: [uuidParameter("id")],
        responses: {
          "200": json(schemaOf(webhookDeliverySchema), "The delivery"),
          ...errors([...adminErrors, "not_found"]),
        },
      },
    },
    "/api/admin/webhook-deliveries/{id}/send-again": {
      post: {
        ...admin,
        summary: "Send a delivery once more, with the same webhook-id",
        tags: ["webhooks"],
        parameters: [uuidParameter("id")],
        responses: {
          "202": json(schemaOf(webhookSendAgainSchema), "The attempt is on its way"),
          ...errors([...adminErrors, "not_found", "conflict", "inngest_unavailable"]),
        },
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "order-fulfillment",
      version: "0.1.0",
      description:
        "Turns a paid Stripe Checkout into a shipped order. Errors are { error: { code, message } }.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        adminToken: { type: "http", scheme: "bearer", description: "ADMIN_API_TOKEN" },
        checkoutToken: { type: "http", scheme: "bearer", description: "CHECKOUT_API_TOKEN" },
      },
    },
  };
}

/** The document, built once: the schemas do not change while the process runs. */
let built: JsonSchema | undefined;
export function openApiDocument(): JsonSchema {
  built ??= buildDocument();
  return built;
}

export const openApiRoute: RequestHandler = (_req, res) => {
  res.json(openApiDocument());
};
