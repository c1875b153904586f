import type Stripe from "stripe";
import {
  checkoutFactsOf,
  orderKeyOf,
  ownershipProblems,
  planFor,
  shippingAddressOf,
  type CheckoutFacts,
  type OrderTerms,
} from "../../../src/orders/intake/stripe-event-plan";
import { checkoutSession, FakeCheckoutLookup, paymentIntent, stripeEvent } from "../../support/fakes/intake";

/**
 * What each Stripe event means for its order (src/orders/intake/stripe-event-plan.ts): pure
 * decisions, tested directly. The ownership problems are the words ops read in the alert and the
 * order's timeline, so they are asserted as written.
 */
const orderId = "3f1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b";
const order: OrderTerms = { orderId, total: 1200, currency: "usd" };
const sessionId = "cs_test_plan";

function facts(overrides: Partial<CheckoutFacts> = {}): CheckoutFacts {
  return new FakeCheckoutLookup().paid(
    { orderId, checkoutSessionId: sessionId, total: 1200, currency: "usd" },
    "requires_capture",
    overrides,
  );
}
const intentOf = (overrides: Partial<NonNullable<CheckoutFacts["paymentIntent"]>>) => ({
  ...(facts().paymentIntent as NonNullable<CheckoutFacts["paymentIntent"]>),
  ...overrides,
});
const piId = facts().paymentIntent?.id ?? "";

describe("checkoutFactsOf", () => {
  const session = (fields: Record<string, unknown>) => checkoutSession({ id: sessionId, ...fields });

  it("reads the session and its expanded PaymentIntent", () => {
    expect(
      checkoutFactsOf(
        session({
          status: "complete",
          payment_status: "paid",
          client_reference_id: orderId,
          metadata: { orderId },
          amount_total: 1200,
          currency: "usd",
          payment_intent: paymentIntent({
            id: "pi_1",
            status: "succeeded",
            amount: 1200,
            currency: "usd",
            metadata: { orderId },
          }),
        }),
      ),
    ).toEqual({
      id: sessionId,
      status: "complete",
      paymentStatus: "paid",
      clientReferenceId: orderId,
      metadataOrderId: orderId,
      amountTotal: 1200,
      currency: "usd",
      paymentIntent: {
        id: "pi_1",
        status: "succeeded",
        amount: 1200,
        currency: "usd",
        metadataOrderId: orderId,
      },
    });
  });

  it("reads the card Checkout saved (setup_future_usage) with its Customer, and nothing otherwise", () => {
    const saved = checkoutFactsOf(
      session({
        payment_intent: paymentIntent({
          id: "pi_saved",
          customer: "cus_1",
          payment_method: "pm_1",
          setup_future_usage: "off_session",
        }),
      }),
    );
    expect(saved.paymentIntent).toMatchObject({ customerId: "cus_1", paymentMethodId: "pm_1" });
    const notSaved = checkoutFactsOf(
      session({
        payment_intent: paymentIntent({ id: "pi_plain", customer: "cus_1", payment_method: "pm_1" }),
      }),
    );
    expect(notSaved.paymentIntent).not.toHaveProperty("paymentMethodId");
  });

  it("reads missing metadata as null, and a session without a PaymentIntent as null", () => {
    expect(
      checkoutFactsOf(session({ metadata: null, payment_intent: null, client_reference_id: null })),
    ).toMatchObject({ metadataOrderId: null, paymentIntent: null, clientReferenceId: null });
    expect(
      checkoutFactsOf(session({ metadata: {}, payment_intent: paymentIntent({ id: "pi_2", metadata: {} }) })),
    ).toMatchObject({ metadataOrderId: null, paymentIntent: { id: "pi_2", metadataOrderId: null } });
  });

  it("refuses a session retrieved without expanding its PaymentIntent", () => {
    expect(() => checkoutFactsOf(session({ payment_intent: "pi_3" }))).toThrow(
      `Checkout Session ${sessionId} was retrieved without expand: ["payment_intent"]`,
    );
  });
});

describe("ownershipProblems", () => {
  it("finds none when the session and PaymentIntent are this order's, in full (currency in any case)", () => {
    expect(ownershipProblems(order, facts(), piId)).toEqual([]);
    expect(ownershipProblems({ ...order, currency: "USD" }, facts(), null)).toEqual([]);
    expect(
      ownershipProblems(
        order,
        facts({ currency: "USD", paymentIntent: intentOf({ currency: "USD" }) }),
        null,
      ),
    ).toEqual([]);
  });

  it("names every problem of the session", () => {
    expect(
      ownershipProblems(
        order,
        facts({
          status: "open",
          clientReferenceId: "someone-else",
          metadataOrderId: "someone-else",
          amountTotal: 1,
          currency: "eur",
        }),
        null,
      ),
    ).toEqual([
      "Stripe says the session is open",
      "session client_reference_id is someone-else",
      "session metadata.orderId is someone-else",
      "session amount_total is 1, the order's total 1200",
      "session currency is eur, the order's usd",
    ]);
  });

  it("says unknown or unset for what Stripe leaves empty", () => {
    expect(
      ownershipProblems(
        order,
        facts({
          status: null,
          clientReferenceId: null,
          metadataOrderId: null,
          amountTotal: null,
          currency: null,
        }),
        null,
      ),
    ).toEqual([
      "Stripe says the session is unknown",
      "session client_reference_id is unset",
      "session metadata.orderId is unset",
      "session amount_total is unset, the order's total 1200",
      "session currency is unset, the order's usd",
    ]);
  });

  it("names every problem of the PaymentIntent", () => {
    expect(
      ownershipProblems(
        order,
        facts({ paymentIntent: intentOf({ metadataOrderId: "someone-else", amount: 5, currency: "gbp" }) }),
        piId,
      ),
    ).toEqual([
      "PaymentIntent metadata.orderId is someone-else",
      "PaymentIntent amount is 5, the order's total 1200",
      "PaymentIntent currency is gbp, the order's usd",
    ]);
    expect(
      ownershipProblems(order, facts({ paymentIntent: intentOf({ metadataOrderId: null }) }), null),
    ).toEqual(["PaymentIntent metadata.orderId is unset"]);
  });

  it("flags an event naming another PaymentIntent than Stripe's session has", () => {
    expect(ownershipProblems(order, facts(), "pi_forged")).toEqual([
      `the event names PaymentIntent pi_forged, Stripe's session ${piId}`,
    ]);
    expect(ownershipProblems(order, facts({ paymentIntent: null }), "pi_forged")).toEqual([
      "the event names PaymentIntent pi_forged, Stripe's session none",
    ]);
    expect(ownershipProblems(order, facts({ paymentIntent: null }), null)).toEqual([]);
  });
});

describe("shippingAddressOf", () => {
  const address = {
    line1: "1 Main St",
    line2: null,
    city: "Springfield",
    state: null,
    postal_code: "12345",
    country: "US",
  };
  const withDetails = (fields: Record<string, unknown>) =>
    checkoutSession({ id: sessionId, ...fields } as Partial<Stripe.Checkout.Session> & { id: string });

  it("reads collected_information.shipping_details, leaving out what is empty", () => {
    expect(
      shippingAddressOf(withDetails({ collected_information: { shipping_details: { name: "", address } } })),
    ).toEqual({ line1: "1 Main St", city: "Springfield", postalCode: "12345", country: "US" });
  });

  it("keeps the name, phone, second line and state when given", () => {
    expect(
      shippingAddressOf(
        withDetails({
          collected_information: {
            shipping_details: { name: "Ada Lovelace", address: { ...address, line2: "Apt 2", state: "IL" } },
          },
          customer_details: { phone: "+15555550100" },
        }),
      ),
    ).toEqual({
      name: "Ada Lovelace",
      phone: "+15555550100",
      line1: "1 Main St",
      line2: "Apt 2",
      city: "Springfield",
      state: "IL",
      postalCode: "12345",
      country: "US",
    });
  });

  it("reads the top-level shipping_details of older API versions, preferring the current field", () => {
    expect(shippingAddressOf(withDetails({ shipping_details: { name: "Old", address } }))).toMatchObject({
      name: "Old",
      line1: "1 Main St",
    });
    expect(
      shippingAddressOf(
        withDetails({
          shipping_details: { name: "Old", address },
          collected_information: { shipping_details: { name: "New", address } },
        }),
      ),
    ).toMatchObject({ name: "New" });
  });

  it("has no address when none was collected or a required part is missing", () => {
    expect(shippingAddressOf(withDetails({}))).toBeNull();
    expect(shippingAddressOf(withDetails({ collected_information: { shipping_details: null } }))).toBeNull();
    expect(
      shippingAddressOf(withDetails({ shipping_details: { name: "No address", address: null } })),
    ).toBeNull();
    for (const missing of ["line1", "city", "postal_code", "country"]) {
      expect(
        shippingAddressOf(
          withDetails({
            collected_information: { shipping_details: { address: { ...address, [missing]: null } } },
          }),
        ),
      ).toBeNull();
    }
  });
});

describe("orderKeyOf", () => {
  it("keys checkout events on their session", () => {
    for (const type of [
      "checkout.session.completed",
      "checkout.session.async_payment_succeeded",
      "checkout.session.async_payment_failed",
      "checkout.session.expired",
    ]) {
      expect(orderKeyOf(stripeEvent(type, checkoutSession({ id: sessionId })))).toEqual({
        checkoutSessionId: sessionId,
      });
    }
  });

  it("keys a cancelled PaymentIntent on itself, unless we voided it", () => {
    expect(orderKeyOf(stripeEvent("payment_intent.canceled", paymentIntent({ id: "pi_1" })))).toEqual({
      paymentIntentId: "pi_1",
    });
    expect(
      orderKeyOf(
        stripeEvent(
          "payment_intent.canceled",
          paymentIntent({ id: "pi_1", cancellation_reason: "abandoned" }),
        ),
      ),
    ).toEqual({ ignore: "voided by our own compensation" });
  });

  it("keys a failed payment on the orderId in its metadata, when that is a uuid", () => {
    const failed = (metadata: unknown) =>
      orderKeyOf(
        stripeEvent("payment_intent.payment_failed", paymentIntent({ id: "pi_1", metadata } as never)),
      );
    expect(failed({ orderId })).toEqual({ orderId });
    expect(failed({ orderId: orderId.toUpperCase() })).toEqual({ orderId: orderId.toUpperCase() });
    const ignored = { ignore: "payment_intent.payment_failed without our orderId" };
    expect(failed({})).toEqual(ignored);
    expect(failed(undefined)).toEqual(ignored);
    expect(failed({ orderId: 42 })).toEqual(ignored);
    expect(failed({ orderId: `x${orderId}` })).toEqual(ignored);
    expect(failed({ orderId: `${orderId}x` })).toEqual(ignored);
  });

  it("ignores other event types", () => {
    expect(orderKeyOf(stripeEvent("charge.refunded", { id: "ch_1" }))).toEqual({
      ignore: "event type charge.refunded is not handled",
    });
  });
});

describe("planFor", () => {
  const stripe = new FakeCheckoutLookup();
  const lookupWith = (overrides: Partial<CheckoutFacts> = {}) => {
    const given = facts(overrides);
    stripe.sessions.set(sessionId, given);
    return stripe.lookup;
  };
  const paymentEvent = (type: string, fields: Record<string, unknown> = {}) =>
    stripeEvent(type, checkoutSession({ id: sessionId, payment_intent: piId, ...fields }));
  const transition = (
    to: string,
    from: string[],
    timelineKind: string,
    paymentIntentId: string | null = piId,
  ) => ({
    kind: "transition",
    checkoutSessionId: sessionId,
    from,
    to,
    paymentIntentId,
    timelineKind,
    shippingAddress: null,
  });
  const withIntent = (status: Stripe.PaymentIntent.Status) =>
    lookupWith({ paymentIntent: intentOf({ status }) });

  describe("checkout.session.completed and async_payment_succeeded", () => {
    it("ignores a session that is not a one-off payment, asking Stripe nothing", async () => {
      const asked = stripe.asked.length;
      expect(
        await planFor(paymentEvent("checkout.session.completed", { mode: "setup" }), lookupWith(), order),
      ).toEqual({
        kind: "ignore",
        reason: "mode setup",
      });
      expect(stripe.asked).toHaveLength(asked);
    });

    it("keeps the saved card with the placement, for a later off-session charge", async () => {
      const completed = paymentEvent("checkout.session.completed");
      const lookup = lookupWith({
        paymentIntent: intentOf({ status: "requires_capture", customerId: "cus_1", paymentMethodId: "pm_1" }),
      });
      expect(await planFor(completed, lookup, order)).toMatchObject({
        kind: "transition",
        to: "authorized",
        savedCard: { customerId: "cus_1", paymentMethodId: "pm_1" },
      });
    });

    it("places the order as Stripe's current PaymentIntent says", async () => {
      const completed = paymentEvent("checkout.session.completed");
      expect(await planFor(completed, withIntent("succeeded"), order)).toEqual(
        transition("paid", ["pending", "payment_processing"], "payment-received"),
      );
      expect(await planFor(completed, withIntent("requires_capture"), order)).toEqual(
        transition("authorized", ["pending"], "payment-authorized"),
      );
      expect(await planFor(completed, withIntent("processing"), order)).toEqual(
        transition("payment_processing", ["pending"], "payment-processing"),
      );
      for (const failed of ["requires_payment_method", "canceled"] as const) {
        expect(await planFor(completed, withIntent(failed), order)).toEqual(
          transition("payment_failed", ["pending", "payment_processing"], "checkout-payment-failed"),
        );
      }
      expect(await planFor(completed, withIntent("requires_action"), order)).toEqual({
        kind: "ignore",
        reason: `PaymentIntent ${piId} is requires_action`,
      });
    });

    it("waits for a delayed payment still processing when the async event comes early", async () => {
      expect(
        await planFor(
          paymentEvent("checkout.session.async_payment_succeeded"),
          withIntent("processing"),
          order,
        ),
      ).toEqual({ kind: "ignore", reason: `PaymentIntent ${piId} is still processing at Stripe` });
      expect(
        await planFor(
          paymentEvent("checkout.session.async_payment_succeeded"),
          withIntent("succeeded"),
          order,
        ),
      ).toEqual(transition("paid", ["pending", "payment_processing"], "payment-received"));
    });

    it("places a session that needed no payment, and ignores one without a PaymentIntent otherwise", async () => {
      const free = paymentEvent("checkout.session.completed", { payment_intent: null });
      expect(
        await planFor(free, lookupWith({ paymentIntent: null, paymentStatus: "no_payment_required" }), order),
      ).toEqual(transition("paid", ["pending", "payment_processing"], "payment-not-required", null));
      expect(
        await planFor(free, lookupWith({ paymentIntent: null, paymentStatus: "unpaid" }), order),
      ).toEqual({
        kind: "ignore",
        reason: "completed session without a PaymentIntent",
      });
    });

    it("stores the address Checkout collected with the move", async () => {
      const event = paymentEvent("checkout.session.completed", {
        collected_information: {
          shipping_details: {
            name: "Ada",
            address: { line1: "1 Main St", city: "Springfield", postal_code: "12345", country: "US" },
          },
        },
      });
      expect(await planFor(event, withIntent("requires_capture"), order)).toMatchObject({
        kind: "transition",
        shippingAddress: {
          name: "Ada",
          line1: "1 Main St",
          city: "Springfield",
          postalCode: "12345",
          country: "US",
        },
      });
    });

    it("holds a payment that is not this order's for ops, with every problem", async () => {
      const event = paymentEvent("checkout.session.async_payment_succeeded", {
        payment_intent: { id: "pi_other" },
      });
      expect(await planFor(event, lookupWith({ amountTotal: 1 }), order)).toEqual({
        kind: "mismatch",
        checkoutSessionId: sessionId,
        reason:
          "Payment does not match the order (checkout.session.async_payment_succeeded): " +
          `session amount_total is 1, the order's total 1200; the event names PaymentIntent pi_other, Stripe's session ${piId}`,
        problems: [
          "session amount_total is 1, the order's total 1200",
          `the event names PaymentIntent pi_other, Stripe's session ${piId}`,
        ],
      });
    });
  });

  it("fails the order on async_payment_failed, keeping the PaymentIntent the payload names", async () => {
    const failed = (paymentIntentField: unknown) =>
      planFor(
        paymentEvent("checkout.session.async_payment_failed", { payment_intent: paymentIntentField }),
        lookupWith(),
        order,
      );
    const plan = (paymentIntentId: string | null) => ({
      kind: "transition",
      checkoutSessionId: sessionId,
      from: ["pending", "payment_processing"],
      to: "payment_failed",
      paymentIntentId,
      timelineKind: "checkout-payment-failed",
    });
    expect(await failed("pi_a")).toEqual(plan("pi_a"));
    expect(await failed({ id: "pi_b" })).toEqual(plan("pi_b"));
    expect(await failed(null)).toEqual(plan(null));
  });

  it("expires a pending order when its session expires", async () => {
    expect(await planFor(paymentEvent("checkout.session.expired"), lookupWith(), order)).toEqual({
      kind: "transition",
      checkoutSessionId: sessionId,
      from: ["pending"],
      to: "expired",
      paymentIntentId: null,
      timelineKind: "checkout-expired",
    });
  });

  it("tells a lapsed authorization from a void by someone else, and ignores our own void", async () => {
    const cancelled = (cancellation_reason: string | null) =>
      planFor(
        stripeEvent("payment_intent.canceled", paymentIntent({ id: "pi_c", cancellation_reason } as never)),
        lookupWith(),
        order,
      );
    const lost = (reason: string) => ({ kind: "authorization-lost", paymentIntentId: "pi_c", reason });
    expect(await cancelled("expired")).toEqual(lost("The card authorization expired before it was captured"));
    expect(await cancelled("automatic")).toEqual(
      lost("The card authorization expired before it was captured"),
    );
    expect(await cancelled("fraudulent")).toEqual(
      lost("The card authorization was voided outside this service (fraudulent)"),
    );
    expect(await cancelled(null)).toEqual(
      lost("The card authorization was voided outside this service (no reason given)"),
    );
    expect(await cancelled("abandoned")).toEqual({
      kind: "ignore",
      reason: "voided by our own compensation",
    });
  });

  it("notes a card declined at checkout on the order its metadata names", async () => {
    const failed = (fields: Record<string, unknown>) =>
      planFor(
        stripeEvent(
          "payment_intent.payment_failed",
          paymentIntent({ id: "pi_d", metadata: { orderId }, ...fields }),
        ),
        lookupWith(),
        order,
      );
    expect(
      await failed({
        last_payment_error: { code: "card_declined", decline_code: "stolen_card", message: "Declined." },
      }),
    ).toEqual({
      kind: "declined",
      orderId,
      detail: { code: "card_declined", declineCode: "stolen_card", message: "Declined." },
    });
    expect(await failed({ last_payment_error: null })).toEqual({
      kind: "declined",
      orderId,
      detail: { code: "payment_failed", message: "The payment failed" },
    });
    expect(await failed({ metadata: { orderId: "8e1c2a9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b" } })).toEqual({
      kind: "ignore",
      reason: "the PaymentIntent's orderId is not this order's",
    });
  });

  it("ignores other event types", async () => {
    expect(await planFor(stripeEvent("invoice.paid", { id: "in_1" }), lookupWith(), order)).toEqual({
      kind: "ignore",
      reason: "event type invoice.paid is not handled",
    });
  });
});
