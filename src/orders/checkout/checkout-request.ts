import { z } from "zod";
import { AppError } from "../../errors";

export const maxQuantityPerLine = 100;

export interface CheckoutRequest {
  customerId: string;
  email: string;
  /** One line per SKU: repeated SKUs in the request are added up. */
  items: { sku: string; quantity: number }[];
  /** Where the order ships, for the shop's rate table (SHIPPING_RATE_TABLE). */
  destination?: CheckoutDestination;
}

export interface CheckoutDestination {
  /** ISO 3166-1 alpha-2, capitals. */
  country: string;
  region?: string;
  postalCode?: string;
}

const destinationSchema = z
  .object({
    country: z
      .string()
      .trim()
      .regex(/^[A-Za-z]{2}$/, "a two-letter ISO country code")
      .transform((value) => value.toUpperCase()),
    region: z.string().trim().min(1).max(100).optional(),
    postalCode: z.string().trim().min(1).max(20).optional(),
  })
  .strict()
  .meta({
    id: "CheckoutDestination",
    description:
      "Where the order ships; required when the shop has a shipping rate table, and what live carrier rates are quoted for (CHECKOUT_LIVE_RATES)",
  });

/**
 * The request as GET /openapi.json documents it. parseCheckoutRequest answers each problem with
 * its own code first (the API's contract), then holds what it built to this schema.
 */
export const checkoutRequestSchema = z
  .object({
    customerId: z.string().trim().min(1).max(200).meta({ description: "The shop's id for the customer" }),
    email: z.email().max(254),
    items: z
      .array(
        z.object({
          sku: z.string().trim().min(1).max(100),
          quantity: z.number().int().min(1).max(maxQuantityPerLine),
        }),
      )
      .min(1)
      .max(50)
      .meta({ description: "Repeated SKUs are added up (at most 100 per SKU)" }),
    destination: destinationSchema.optional(),
  })
  .meta({ id: "CheckoutRequest" });

export const checkoutResultSchema = z
  .object({ orderId: z.uuid(), checkoutSessionId: z.string(), checkoutUrl: z.url() })
  .meta({ id: "CheckoutResult" });

const shape = z.object({
  customerId: z.string().trim().min(1).max(200),
  email: z.unknown().optional(),
  items: z.unknown().optional(),
  destination: z.unknown().optional(),
});
const item = z.object({ sku: z.string().trim().min(1).max(100), quantity: z.unknown() });
const email = z.email().max(254);

/**
 * Validates `POST /api/checkout` with a specific code per problem (the API's contract):
 * `empty_order`, `invalid_quantity` (not an integer in 1..100), `invalid_email`, and
 * `validation_failed` for anything malformed. Unknown SKUs need the catalog: see the service.
 */
export function parseCheckoutRequest(body: unknown): CheckoutRequest {
  const parsed = shape.safeParse(body);
  if (!parsed.success) {
    throw new AppError("validation_failed", "Expected { customerId, email, items: [{ sku, quantity }] }", {
      details: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
    });
  }
  const { customerId, items } = parsed.data;
  if (typeof parsed.data.email !== "string" || !email.safeParse(parsed.data.email.trim()).success) {
    throw new AppError("invalid_email", "email is not a valid e-mail address");
  }
  if (items === undefined || (Array.isArray(items) && items.length === 0)) {
    throw new AppError("empty_order", "An order needs at least one item");
  }
  if (!Array.isArray(items) || items.length > 50) {
    throw new AppError("validation_failed", "items must be an array of at most 50 { sku, quantity }");
  }
  const merged = new Map<string, number>();
  items.forEach((raw, index) => {
    const line = item.safeParse(raw);
    if (!line.success) throw new AppError("validation_failed", `items[${index}] must be { sku, quantity }`);
    const { sku, quantity } = line.data;
    if (
      typeof quantity !== "number" ||
      !Number.isInteger(quantity) ||
      quantity <= 0 ||
      quantity > maxQuantityPerLine
    ) {
      throw new AppError(
        "invalid_quantity",
        `items[${index}].quantity must be an integer from 1 to ${maxQuantityPerLine}`,
      );
    }
    merged.set(sku, (merged.get(sku) ?? 0) + quantity);
  });
  for (const [sku, quantity] of merged) {
    if (quantity > maxQuantityPerLine) {
      throw new AppError(
        "invalid_quantity",
        `${sku}: at most ${maxQuantityPerLine} per order, ${quantity} requested`,
      );
    }
  }
  let destination: CheckoutDestination | undefined;
  if (parsed.data.destination !== undefined && parsed.data.destination !== null) {
    const given = destinationSchema.safeParse(parsed.data.destination);
    if (!given.success) {
      throw new AppError("validation_failed", "destination must be { country, region?, postalCode? }", {
        details: given.error.issues.map((i) => ({
          path: ["destination", ...i.path].join("."),
          message: i.message,
        })),
      });
    }
    destination = given.data;
  }
  const request: CheckoutRequest = {
    customerId,
    email: parsed.data.email.trim(),
    items: [...merged].map(([sku, quantity]) => ({ sku, quantity })),
    ...(destination ? { destination } : {}),
  };
  const checked = checkoutRequestSchema.safeParse(request);
  if (!checked.success) {
    throw new AppError(
      "validation_failed",
      checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    );
  }
  return request;
}
