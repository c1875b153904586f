import { Middleware } from "inngest";

/**
 * Masks the customer's data in every error a step or a function throws, before the SDK sends it.
 *
 * The encryption middleware (src/inngest/encryption.ts) seals step results and the customer's
 * event fields, but an error travels in clear: Inngest shows its name, message and stack, and
 * copies them into inngest/function.failed (which the ops alert is made from). A carrier or a
 * mail server that quotes the address or the recipient it refused would put them there. So,
 * in place (the error keeps its class: NonRetriableError must stay one), the message, the stack
 * and every cause have any e-mail address and each of the order's own customer values (its
 * e-mail and shipping address: name, phone, street, city, postal code) replaced. Our own log
 * lines then carry the masked text too, which is as it should be.
 */

const emailAddress = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
export const maskedCustomerData = "[customer data]";
/** Shorter values (a country or state code) would mask ordinary words. */
const shortestMaskedValue = 3;
const maxCauseDepth = 5;

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function maskCustomerData(text: string, values: readonly string[]): string {
  let masked = text;
  const distinct = [...new Set(values.map((value) => value.trim()))]
    .filter((value) => value.length >= shortestMaskedValue)
    // Longest first, so "742 Evergreen Terrace" goes before a part of it.
    .sort((a, b) => b.length - a.length);
  for (const value of distinct)
    masked = masked.replace(new RegExp(escapeRegExp(value), "gi"), maskedCustomerData);
  return masked.replace(emailAddress, "[email]");
}

function maskError(error: unknown, values: readonly string[], depth = 0): void {
  if (depth > maxCauseDepth || typeof error !== "object" || error === null) return;
  const subject = error as { message?: unknown; stack?: unknown; cause?: unknown };
  try {
    if (typeof subject.message === "string") subject.message = maskCustomerData(subject.message, values);
    if (typeof subject.stack === "string") subject.stack = maskCustomerData(subject.stack, values);
  } catch {
    // A frozen or getter-only error: the SDK's own serialization still applies.
  }
  maskError(subject.cause, values, depth + 1);
}

function orderIdOf(event: unknown): string | undefined {
  const data = (
    event as { data?: { orderId?: unknown; event?: { data?: { orderId?: unknown } } } } | undefined
  )?.data;
  const orderId = data?.orderId ?? data?.event?.data?.orderId;
  return typeof orderId === "string" ? orderId : undefined;
}

function emailOf(event: unknown): string[] {
  const email = (event as { data?: { email?: unknown } } | undefined)?.data?.email;
  return typeof email === "string" ? [email] : [];
}

export function customerDataScrubbing(deps: {
  /** The order's customer values (src/orders/customer-data.ts). */
  customerData: (orderId: string) => Promise<string[]>;
}): Middleware.Class {
  async function rethrowMasked(error: unknown, event: unknown): Promise<never> {
    const orderId = orderIdOf(event);
    // The lookup failing (the database gone) still leaves the e-mail pattern masked.
    const values = orderId ? await deps.customerData(orderId).catch(() => []) : [];
    maskError(error, [...values, ...emailOf(event)]);
    throw error;
  }

  return class CustomerDataScrubbing extends Middleware.BaseMiddleware {
    readonly id = "order-fulfillment:customer-data-scrubbing";

    override async wrapStepHandler({ ctx, next }: Middleware.WrapStepHandlerArgs): Promise<unknown> {
      try {
        return await next();
      } catch (error) {
        return rethrowMasked(error, ctx.event);
      }
    }

    override async wrapFunctionHandler({ ctx, next }: Middleware.WrapFunctionHandlerArgs): Promise<unknown> {
      try {
        return await next();
      } catch (error) {
        return rethrowMasked(error, ctx.event);
      }
    }
  };
}
