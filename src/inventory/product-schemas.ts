import { z } from "zod";
import { minorUnitsSchema } from "../shared/money";
import { isSupportedCurrency } from "./currencies";

/**
 * The catalog's request and response shapes, one source for the admin API's validation and for
 * GET /openapi.json (src/http/openapi.ts builds the document from these with z.toJSONSchema).
 * No transforms: a schema must describe what the client sends, so normalising (lower-case
 * currency) happens in the use case.
 */
export const skuSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a SKU is 1 to 64 letters, digits, '.', '_' or '-'")
  .meta({ description: "Stock keeping unit, the product's key", example: "MUG-LOGO" });

const positiveMeasure = (what: string) =>
  z.number().positive().max(100_000).nullable().meta({ description: what });

export const productFields = {
  name: z.string().trim().min(1).max(200),
  // Not 0: Stripe cannot capture (or take a Checkout for) a zero amount, so every order of a free
  // product would fail at capture (docs/catalog.md).
  unitPrice: minorUnitsSchema({ min: 1, max: 100_000_000 }).meta({
    description: "Price in minor units (cents): 1250 is 12.50 USD, 1250 JPY is ¥1250",
  }),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/, { error: "an ISO 4217 code of three letters", abort: true })
    .refine(isSupportedCurrency, {
      error: (issue) =>
        `${String(issue.input)} is not a currency Stripe charges in; use an ISO 4217 code such as usd, eur or jpy`,
    })
    .meta({ description: "ISO 4217, e.g. usd", example: "usd" }),
  digital: z.boolean().meta({ description: "Nothing to ship: no address asked, no parcel booked" }),
  shipsAlone: z.boolean().meta({ description: "Each unit ships in a parcel of its own (docs/shipping.md)" }),
  weightOz: positiveMeasure("Weight of one unit in ounces; unset: SHIPPING_ITEM_WEIGHT_OZ"),
  lengthIn: positiveMeasure("Length of one unit in inches"),
  widthIn: positiveMeasure("Width of one unit in inches"),
  heightIn: positiveMeasure("Height of one unit in inches"),
  lowStockThreshold: z
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .nullable()
    .meta({ description: "Ops are alerted once when stock falls to this; null: never" }),
  taxCode: z
    .string()
    .regex(/^txcd_\d{8}$/, "a Stripe tax code is txcd_ and eight digits, e.g. txcd_99999999")
    .nullable()
    .meta({
      description:
        "Stripe Tax's product tax code (docs/checkout.md); null: the shop's CHECKOUT_DEFAULT_TAX_CODE",
      example: "txcd_99999999",
    }),
};

export const createProductBody = z
  .object({
    sku: skuSchema,
    name: productFields.name,
    unitPrice: productFields.unitPrice,
    currency: productFields.currency,
    digital: productFields.digital.optional(),
    shipsAlone: productFields.shipsAlone.optional(),
    weightOz: productFields.weightOz.optional(),
    lengthIn: productFields.lengthIn.optional(),
    widthIn: productFields.widthIn.optional(),
    heightIn: productFields.heightIn.optional(),
    lowStockThreshold: productFields.lowStockThreshold.optional(),
    taxCode: productFields.taxCode.optional(),
    stockOnHand: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .optional()
      .meta({ description: "Opening stock, recorded in the ledger as received" }),
  })
  .strict()
  .meta({ id: "CreateProduct" });
export type CreateProductBody = z.infer<typeof createProductBody>;

export const updateProductBody = z
  .object({
    name: productFields.name.optional(),
    unitPrice: productFields.unitPrice.optional(),
    currency: productFields.currency.optional(),
    digital: productFields.digital.optional(),
    shipsAlone: productFields.shipsAlone.optional(),
    weightOz: productFields.weightOz.optional(),
    lengthIn: productFields.lengthIn.optional(),
    widthIn: productFields.widthIn.optional(),
    heightIn: productFields.heightIn.optional(),
    lowStockThreshold: productFields.lowStockThreshold.optional(),
    taxCode: productFields.taxCode.optional(),
    archived: z
      .boolean()
      .optional()
      .meta({ description: "Archived: no new checkout; placed orders keep theirs" }),
    version: z
      .number()
      .int()
      .positive()
      .optional()
      .meta({ description: "The version read (as If-Match): a stale one is refused with 409" }),
  })
  .strict()
  .meta({ id: "UpdateProduct" });
export type UpdateProductBody = z.infer<typeof updateProductBody>;

/** Reasons a person may give; reserved and released are written by checkout and fulfilment only. */
export const manualStockReasons = ["received", "adjusted", "counted", "returned", "written-off"] as const;
export const stockReasons = [
  "received",
  "adjusted",
  "counted",
  "reserved",
  "released",
  "returned",
  "written-off",
] as const;
export type StockReason = (typeof stockReasons)[number];

export const stockChangeBody = z
  .object({
    delta: z
      .number()
      .int()
      .min(-1_000_000_000)
      .max(1_000_000_000)
      .refine((n) => n !== 0, "a delta of 0 changes nothing")
      .optional()
      .meta({ description: "Units to add (positive) or take away (negative)" }),
    count: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .optional()
      .meta({ description: "Units counted on the shelf: the ledger records the difference" }),
    reason: z.enum(manualStockReasons),
    note: z.string().trim().max(500).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.delta === undefined) === (body.count === undefined)) {
      ctx.addIssue({ code: "custom", path: ["delta"], message: "send exactly one of delta and count" });
      return;
    }
    if (body.count !== undefined && body.reason !== "counted")
      ctx.addIssue({ code: "custom", path: ["reason"], message: "a count has the reason counted" });
    if (body.delta !== undefined && body.reason === "counted")
      ctx.addIssue({ code: "custom", path: ["reason"], message: "counted takes a count, not a delta" });
    if (
      body.delta !== undefined &&
      body.delta < 0 &&
      (body.reason === "received" || body.reason === "returned")
    )
      ctx.addIssue({
        code: "custom",
        path: ["delta"],
        message: `${body.reason} adds stock: the delta must be positive`,
      });
    if (body.delta !== undefined && body.delta > 0 && body.reason === "written-off")
      ctx.addIssue({
        code: "custom",
        path: ["delta"],
        message: "written-off takes stock away: the delta must be negative",
      });
  })
  .meta({ id: "StockChange" });
export type StockChangeBody = z.infer<typeof stockChangeBody>;

export const stockPageQuery = z
  .object({
    limit: z
      .string()
      .regex(/^\d{1,3}$/)
      .optional()
      .meta({ description: "1 to 200, default 50" }),
    before: z
      .string()
      .regex(/^\d{1,19}$/)
      .optional()
      .meta({ description: "nextCursor of the page before" }),
  })
  .strict();

export const productSchema = z
  .object({
    sku: z.string(),
    name: z.string(),
    unitPrice: z.number().int(),
    currency: z.string(),
    digital: z.boolean(),
    shipsAlone: z.boolean(),
    weightOz: z.number().nullable(),
    lengthIn: z.number().nullable(),
    widthIn: z.number().nullable(),
    heightIn: z.number().nullable(),
    lowStockThreshold: z.number().int().nullable(),
    taxCode: z.string().nullable(),
    stockOnHand: z.number().int(),
    lowStock: z.boolean(),
    archived: z.boolean(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .strict()
  .meta({ id: "Product" });
export type Product = z.infer<typeof productSchema>;

export const stockMovementSchema = z
  .object({
    id: z.string(),
    sku: z.string(),
    delta: z.number().int(),
    reason: z.enum(stockReasons),
    actor: z.string(),
    orderId: z.string().nullable(),
    note: z.string().nullable(),
    stockAfter: z.number().int(),
    createdAt: z.string(),
  })
  .strict()
  .meta({ id: "StockMovement" });
export type StockMovement = z.infer<typeof stockMovementSchema>;

export const productListSchema = z.object({ products: z.array(productSchema) }).strict();
export const stockPageSchema = z
  .object({ movements: z.array(stockMovementSchema), nextCursor: z.string().nullable() })
  .strict();

/** Checks a request part against its schema; the message names every bad field. */
export function describeIssues(error: z.ZodError): { message: string; fields: string[] } {
  const fields = [...new Set(error.issues.map((issue) => issue.path.join(".") || "(body)"))];
  return {
    message: error.issues.map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`).join("; "),
    fields,
  };
}

/** GET /api/products: what can be bought (archived products are left out; sold out ones show 0). */
export const publicProductListSchema = z
  .object({
    products: z.array(
      z
        .object({
          sku: z.string(),
          name: z.string(),
          unitPrice: z.number().int(),
          currency: z.string(),
          quantityAvailable: z.number().int(),
          digital: z.literal(true).optional(),
        })
        .strict()
        .meta({ id: "PublicProduct" }),
    ),
  })
  .strict();

/**
 * POST /api/admin/products/import: the CSV travels as a JSON string, so the admin API keeps its
 * one body parser (express.json, 100 kB: a few thousand products a request).
 */
export const importBody = z
  .object({
    csv: z.string().min(1).meta({ description: "The file, header line first: the columns of the export" }),
    dryRun: z.boolean().optional().meta({ description: "Report what would change, change nothing" }),
  })
  .strict()
  .meta({ id: "CatalogImport" });

export const importResultSchema = z
  .object({
    dryRun: z.boolean(),
    rows: z.array(
      z
        .object({
          line: z.number().int(),
          sku: z.string(),
          action: z.enum(["create", "update", "unchanged"]),
          changes: z.record(z.string(), z.tuple([z.unknown(), z.unknown()])),
        })
        .strict(),
    ),
    summary: z
      .object({ create: z.number().int(), update: z.number().int(), unchanged: z.number().int() })
      .strict(),
  })
  .strict()
  .meta({ id: "CatalogImportResult" });
