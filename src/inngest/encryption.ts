import { encryptionMiddleware, isEncryptedValue } from "@inngest/middleware-encryption";
import { Middleware } from "inngest";
import { orderPlaced } from "../events/contracts";

/**
 * End-to-end encryption of customer data on its way to Inngest, with Inngest's own
 * `@inngest/middleware-encryption` (v2, for SDK v4; libsodium secretbox, key rotation by
 * decryption fallbacks). Inngest (Cloud, or the local engine) stores and shows only ciphertext of:
 *
 * - every step result and every function's return value (the library encrypts them all);
 * - the customer's fields of the events named in `sealedEvents`: all but `clearFields`, which
 *   Inngest itself must read (idempotency `event.data.fulfilmentKey`, concurrency key
 *   `event.data.customerId`, `cancelOn`/`waitForEvent` matches on `orderId`).
 *
 * The library encrypts one top-level event field (`data.encrypted`). Our events stay flat in the
 * code: this middleware moves the sealed fields into `data.encrypted` before the library encrypts
 * an event being sent, and back to the top level after it decrypts a run's trigger, before the
 * event's schema is checked. An event sent before encryption was switched on arrives flat and is
 * used as it is.
 */

/** Fields every sealed event keeps in clear: ids that Inngest expressions read. */
export const clearFields: readonly string[] = ["orderId", "customerId", "fulfilmentKey"];
/** Events whose other fields are the customer's data (e-mail address, payment id, amounts). */
export const sealedEvents: ReadonlySet<string> = new Set([orderPlaced.name]);

const sealedField = "encrypted";

export interface EncryptionKeys {
  /** Encrypts and decrypts. */
  current: string;
  /** Decrypts only: the key being rotated out, for runs that started under it. */
  previous?: string;
}

type EventLike = { name: string; data?: unknown };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function seal<E extends EventLike>(event: E): E {
  if (!sealedEvents.has(event.name) || !isRecord(event.data) || sealedField in event.data) return event;
  const clear: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event.data)) {
    (clearFields.includes(key) ? clear : secret)[key] = value;
  }
  return { ...event, data: { ...clear, [sealedField]: secret } };
}

function unseal<E extends EventLike>(event: E): E {
  if (!isRecord(event.data)) return event;
  const secret = event.data[sealedField];
  // Still ciphertext (a key we do not hold) or not ours: leave it for the schema to refuse.
  if (!isRecord(secret) || isEncryptedValue(secret)) return event;
  const { [sealedField]: _sealed, ...clear } = event.data;
  return { ...event, data: { ...secret, ...clear } };
}

export function customerDataEncryption(keys: EncryptionKeys): Middleware.Class {
  const Library = encryptionMiddleware({
    key: keys.current,
    ...(keys.previous ? { fallbackDecryptionKeys: [keys.previous] } : {}),
    eventEncryptionField: sealedField,
  });

  return class CustomerDataEncryption extends Middleware.BaseMiddleware {
    readonly id = "order-fulfillment:customer-data-encryption";
    private readonly library: Middleware.BaseMiddleware;

    constructor(args: { client: Middleware.BaseMiddleware["client"] }) {
      super(args);
      this.library = new Library(args);
    }

    override async transformSendEvent(arg: Middleware.TransformSendEventArgs) {
      const sealed = { ...arg, events: arg.events.map((event) => seal(event)) };
      return (await this.library.transformSendEvent?.(sealed)) ?? sealed;
    }

    override async transformFunctionInput(arg: Middleware.TransformFunctionInputArgs) {
      const decrypted = (await this.library.transformFunctionInput?.(arg)) ?? arg;
      const { ctx } = decrypted;
      return {
        ...decrypted,
        ctx: {
          ...ctx,
          event: ctx.event ? unseal(ctx.event) : ctx.event,
          events: ctx.events ? (ctx.events.map((event) => unseal(event)) as typeof ctx.events) : ctx.events,
        },
      };
    }

    override async transformStepInput(
      arg: Parameters<NonNullable<Middleware.BaseMiddleware["transformStepInput"]>>[0],
    ) {
      return (await this.library.transformStepInput?.(arg)) ?? arg;
    }

    override wrapFunctionHandler(args: Middleware.WrapFunctionHandlerArgs): Promise<unknown> {
      return this.library.wrapFunctionHandler?.(args) ?? args.next();
    }

    override wrapStepHandler(args: Middleware.WrapStepHandlerArgs): Promise<unknown> {
      return this.library.wrapStepHandler?.(args) ?? args.next();
    }

    override wrapStep(args: Middleware.WrapStepArgs): Promise<unknown> {
      return this.library.wrapStep?.(args) ?? args.next();
    }
  };
}
