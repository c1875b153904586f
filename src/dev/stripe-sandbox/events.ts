import Stripe from "stripe";
import type { Origin, SandboxContext } from "./context";
import { unixSeconds } from "./context";
import { stripeErrors } from "./errors";
import { fromFixture } from "./fixtures";
import type { Params } from "./form";
import { optionalHash, optionalInteger, optionalList, optionalString } from "./form";
import { stripeId } from "./ids";

type EventObject =
  | Stripe.Checkout.Session
  | Stripe.PaymentIntent
  | Stripe.Charge
  | Stripe.Refund
  | Stripe.Dispute
  | Stripe.Review;

export function recordEvent(
  ctx: SandboxContext,
  type: Stripe.Event.Type,
  object: EventObject,
  origin: Origin,
): Stripe.Event {
  const event = {
    ...fromFixture("event"),
    id: stripeId("evt"),
    api_version: Stripe.API_VERSION,
    created: unixSeconds(ctx.now()),
    // A snapshot: later changes to the object must not rewrite history.
    data: { object: structuredClone(object) },
    livemode: false,
    pending_webhooks: ctx.webhookEndpointCount(),
    request: { id: origin.requestId, idempotency_key: origin.idempotencyKey },
    type,
  } as unknown as Stripe.Event;
  ctx.store.addEvent(event);
  return event;
}

export function retrieveEvent(ctx: SandboxContext, id: string): Stripe.Event {
  const event = ctx.store.findEvent(id);
  if (!event) throw stripeErrors.resourceMissing("event", id);
  return event;
}

function typeMatcher(pattern: string): (type: string) => boolean {
  if (!pattern.includes("*")) return (type) => type === pattern;
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  const regex = new RegExp(`^${escaped.join(".*")}$`);
  return (type) => regex.test(type);
}

export function createdMatcher(params: Params): (created: number) => boolean {
  const exact = typeof params.created === "string" ? optionalInteger(params, "created") : undefined;
  if (exact !== undefined) return (created) => created === exact;
  const range = optionalHash(params, "created") ?? {};
  const bound = (name: string): number | undefined => optionalInteger(range, name, `created[${name}]`);
  const [gt, gte, lt, lte] = [bound("gt"), bound("gte"), bound("lt"), bound("lte")];
  return (created) =>
    (gt === undefined || created > gt) &&
    (gte === undefined || created >= gte) &&
    (lt === undefined || created < lt) &&
    (lte === undefined || created <= lte);
}

function typeFilter(params: Params): (type: string) => boolean {
  const single = optionalString(params, "type");
  const many = optionalList(params, "types");
  if (single !== undefined && many !== undefined) {
    throw stripeErrors.invalidRequest(
      "parameter_invalid",
      "You may only specify one of these parameters: type, types.",
    );
  }
  if (many !== undefined) {
    if (many.length > 20) throw stripeErrors.invalidParam("types", "You may pass at most 20 types.");
    const matchers = many.map((type) => {
      if (typeof type !== "string")
        throw stripeErrors.invalidParam("types", "Invalid array of strings: types");
      return typeMatcher(type);
    });
    return (type) => matchers.some((match) => match(type));
  }
  return single === undefined ? () => true : typeMatcher(single);
}

/**
 * `GET /v1/events`: newest first, cursor pagination with `starting_after`/`ending_before`
 * (the cursor is a position in the whole stream, so it works even when the cursor event
 * itself does not match the filters), `limit` 1..100 (default 10), `has_more`.
 */
export function listEvents(ctx: SandboxContext, params: Params): Stripe.ApiList<Stripe.Event> {
  const matchesType = typeFilter(params);
  return listOf(
    ctx.store.data.events,
    params,
    "/v1/events",
    (event) => matchesType(event.type),
    (cursor, param) => stripeErrors.resourceMissing("event", cursor, param),
  );
}

/**
 * Stripe's list convention, shared by every list endpoint here: newest first, `limit` 1..100
 * (default 10), `starting_after`/`ending_before` cursors, `created` filter, `has_more`.
 */
export function listOf<T extends { id: string; created: number }>(
  all: T[],
  params: Params,
  url: string,
  filter: (item: T) => boolean = () => true,
  missingCursor: (cursor: string, param: string) => Error = (cursor, param) =>
    stripeErrors.invalidParam(param, `No such object: '${cursor}'`),
): Stripe.ApiList<T> {
  const limit = optionalInteger(params, "limit") ?? 10;
  if (limit < 1 || limit > 100) {
    throw stripeErrors.invalidParam(
      "limit",
      "Invalid limit: must be between 1 and 100",
      "parameter_invalid_integer",
    );
  }
  const startingAfter = optionalString(params, "starting_after");
  const endingBefore = optionalString(params, "ending_before");
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw stripeErrors.invalidRequest(
      "parameter_invalid",
      "You may only specify one of these parameters: ending_before, starting_after.",
    );
  }
  const matchesCreated = createdMatcher(params);
  const newestFirst = [...all].reverse();
  const position = (cursor: string, param: string): number => {
    const index = newestFirst.findIndex((item) => item.id === cursor);
    if (index < 0) throw missingCursor(cursor, param);
    return index;
  };
  const matches = (item: T) => matchesCreated(item.created) && filter(item);
  if (endingBefore !== undefined) {
    const newer = newestFirst.slice(0, position(endingBefore, "ending_before")).filter(matches);
    return {
      object: "list",
      data: newer.slice(Math.max(0, newer.length - limit)),
      has_more: newer.length > limit,
      url,
    };
  }
  const from = startingAfter === undefined ? 0 : position(startingAfter, "starting_after") + 1;
  const older = newestFirst.slice(from).filter(matches);
  return { object: "list", data: older.slice(0, limit), has_more: older.length > limit, url };
}
