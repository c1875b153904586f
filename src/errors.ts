/**
 * The application's one error type. Domain code throws AppError with a business code;
 * the HTTP layer maps the code to a status through httpStatusByCode and nowhere else.
 */
export const httpStatusByCode = {
  validation_failed: 400,
  bad_request: 400,
  invalid_json: 400,
  invalid_signature: 400,
  unknown_sku: 400,
  invalid_quantity: 400,
  empty_order: 400,
  invalid_email: 400,
  return_line_invalid: 400,
  return_quantity_exceeded: 400,
  exchange_sku_invalid: 400,
  unauthorized: 401,
  not_found: 404,
  order_not_found: 404,
  route_not_found: 404,
  product_not_found: 404,
  shipment_not_found: 404,
  return_not_found: 404,
  insufficient_stock: 409,
  order_not_cancellable: 409,
  order_not_refundable: 409,
  refund_exceeds_captured: 409,
  charge_disputed: 409,
  order_not_redrivable: 409,
  order_not_holdable: 409,
  order_not_held: 409,
  order_not_shipped: 409,
  parcel_delivered: 409,
  reship_in_progress: 409,
  order_not_returnable: 409,
  return_window_closed: 409,
  return_not_actionable: 409,
  exchange_needs_saved_card: 409,
  conflict: 409,
  product_exists: 409,
  currency_locked: 409,
  version_conflict: 409,
  product_unavailable: 409,
  idempotency_key_reused: 422,
  shipping_destination_required: 422,
  shipping_destination_not_covered: 422,
  tax_code_required: 422,
  amount_too_small: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  upstream_unavailable: 502,
  not_ready: 503,
  service_unavailable: 503,
  database_unavailable: 503,
  inngest_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof httpStatusByCode;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details;
  }

  get httpStatus(): number {
    return httpStatusByCode[this.code];
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
