import { AppError } from "../../../src/errors";
import { createStripeIntake, type StripeIntake } from "../../../src/orders/intake/stripe-intake";
import {
  checkoutSession,
  intakeFakes,
  paymentIntent,
  stripeEvent,
  type FakeOrder,
  type IntakeFakes,
} from "../../support/fakes/intake";

/**
 * The Stripe intake (createStripeIntake) driven directly, its ports faked in memory
 * (test/support/fakes/intake.ts): the fast tier that mutation testing runs once per mutant.
 * test/orders/stripe-webhook.test.ts is the end-to-end check of the same guarantees through the
 * signed HTTP route, PostgreSQL and Inngest's event API.
 */
describe("Stripe intake (in-memory ports)", () => {
  let f: IntakeFakes;
  let intake: StripeIntake;
  beforeEach(() => {
    f = intakeFakes();
    intake = createStripeIntake(f.deps);
  });

  /** As Stripe sends it: the session names its order (client_reference_id), as ours always do. */
  const completed = (order: FakeOrder, type = "checkout.session.completed", id?: string) =>
    stripeEvent(
      type,
      checkoutSession({
        id: order.checkoutSessionId,
        client_reference_id: order.orderId,
        payment_intent: `pi_${order.orderId.slice(0, 8)}`,
      }),
      id,
    );

  /** A pending order whose customer has authorized the payment at Stripe (manual capture). */
  function authorizedAtStripe(fields: Partial<FakeOrder> = {}) {
    const order = f.repository.addOrder(fields);
    f.stripe.paid(order, "requires_capture");
    return order;
  }

  const placedEvents = (orderId: string) =>
    f.publisher.accepted.filter((event) => event.id === `order-placed-${orderId}`);

  /** Another process (a restart, another replica) sharing the database: nothing in memory. */
  const anotherReplica = () => createStripeIntake(f.deps);

  describe("placing an order", () => {
    it("moves the order, announces it once with its data, and marks it announced", async () => {
      const order = authorizedAtStripe({ currency: "USD" });
      const event = completed(order);

      const result = await intake.handle(event);

      expect(result).toEqual({ outcome: "processed", orderId: order.orderId, announced: true });
      expect(f.repository.order(order.orderId)).toMatchObject({
        status: "authorized",
        paymentIntentId: `pi_${order.orderId.slice(0, 8)}`,
        placedEventSentAt: expect.any(Date),
      });
      expect(f.publisher.accepted).toEqual([
        {
          name: "shop/order.placed",
          id: `order-placed-${order.orderId}`,
          data: {
            orderId: order.orderId,
            customerId: "cus-ada",
            email: "ada@example.com",
            total: 1200,
            currency: "usd",
            paymentIntentId: `pi_${order.orderId.slice(0, 8)}`,
            fulfilmentKey: order.orderId,
          },
        },
      ]);
      expect(f.repository.timelineOf(order.orderId).map((entry) => entry.kind)).toEqual([
        "payment-authorized",
        "order-placed-sent",
      ]);
      expect(f.repository.timelineOf(order.orderId)[1]?.detail).toEqual({ stripeEvent: event.id });
      expect(f.transitions).toEqual(["authorized"]);
      expect(f.holds.released).toEqual([]);
    });

    it("answers a redelivery as a duplicate and sends nothing more, in this process and in another", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      await intake.handle(event);

      expect(await intake.handle(event)).toEqual({ outcome: "duplicate", announced: false });
      expect(await anotherReplica().handle(event)).toEqual({
        outcome: "duplicate",
        orderId: order.orderId,
        announced: false,
      });
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.publisher.attempts).toBe(1);
      // This process answers from memory; another asks Stripe first (the price of the two-statement
      // first delivery, see placeAsClaimed), then finds the event recorded.
      expect(f.stripe.asked).toEqual([order.checkoutSessionId, order.checkoutSessionId]);
      expect(f.transitions).toEqual(["authorized"]);
    });

    it("places an order in two statements: no read before the one that records and moves it", async () => {
      const order = authorizedAtStripe();

      expect(await intake.handle(completed(order))).toMatchObject({ outcome: "processed", announced: true });
      expect(f.repository.calls).toEqual(["recordPlacement", "markAnnounced"]);
      expect(f.stripe.asked).toEqual([order.checkoutSessionId]);
    });

    it("a session naming an order id this database does not have changes nothing (after asking Stripe)", async () => {
      const stranger = f.repository.addOrder();
      f.stripe.paid(stranger, "requires_capture");
      f.repository.orders.delete(stranger.orderId);

      expect(await intake.handle(completed(stranger))).toEqual({
        outcome: "unknown-order",
        announced: false,
      });
      expect(f.repository.events.size).toBe(0);
      expect(f.publisher.attempts).toBe(0);
      expect(f.stripe.asked).toEqual([stranger.checkoutSessionId]);
    });

    it("answers a redelivery of a settled event from memory, even with the database unreachable", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      await intake.handle(event);

      f.repository.unreachable = true;
      expect(await intake.handle(event)).toEqual({ outcome: "duplicate", announced: false });
      await expect(anotherReplica().handle(event)).rejects.toThrow("database unreachable");
    });

    it("sends one shop/order.placed when two deliveries of the event arrive together", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      const open = f.publisher.gate();

      // One process: its per-order turn-taking is what keeps the second from sending. (Two
      // replicas racing are covered by Inngest's id deduplication, not by this intake.)
      const both = Promise.all([intake.handle(event), intake.handle(event)]);
      await new Promise((resolve) => setImmediate(resolve));
      open();
      const results = await both;

      expect(results.map((r) => r.outcome).sort()).toEqual(["duplicate", "processed"]);
      expect(results.filter((r) => r.announced)).toHaveLength(1);
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.repository.order(order.orderId).placedEventSentAt).toEqual(expect.any(Date));
    });

    it("sends one shop/order.placed when completed and async_payment_succeeded race for one order", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "succeeded");
      const open = f.publisher.gate();

      const both = Promise.all([
        intake.handle(completed(order)),
        intake.handle(completed(order, "checkout.session.async_payment_succeeded")),
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      open();
      const results = await both;

      expect(results.map((r) => r.outcome)).toEqual(["processed", "processed"]);
      expect(results.filter((r) => r.announced)).toHaveLength(1);
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.repository.order(order.orderId).status).toBe("paid");
      expect(f.transitions).toEqual(["paid"]);
    });

    it("a late checkout.session.completed after the order is paid changes nothing and sends nothing", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "succeeded");
      await intake.handle(completed(order, "checkout.session.async_payment_succeeded"));

      const late = await intake.handle(completed(order));

      expect(late).toEqual({ outcome: "processed", orderId: order.orderId, announced: false });
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.transitions).toEqual(["paid"]);
      expect(f.repository.timelineOf(order.orderId).map((entry) => entry.kind)).toEqual([
        "payment-received",
        "order-placed-sent",
      ]);
    });

    it("does not announce an order whose payment is still processing, then announces it once paid", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "processing");

      expect(await intake.handle(completed(order))).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId).status).toBe("payment_processing");
      expect(f.publisher.attempts).toBe(0);

      f.stripe.paid(order, "succeeded");
      expect(await intake.handle(completed(order, "checkout.session.async_payment_succeeded"))).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: true,
      });
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.transitions).toEqual(["payment_processing", "paid"]);
    });
  });

  /**
   * Which statements a delivery asks for (FakeIntakeRepository.calls) and whether it asks Stripe:
   * the two-statement path (placeAsClaimed) for a payment whose session names its order, the
   * general path (read first) for everything else, and the way back from one to the other.
   */
  describe("the path a delivery takes", () => {
    const session = (order: FakeOrder, fields: Record<string, unknown> = {}) =>
      checkoutSession({
        id: order.checkoutSessionId,
        client_reference_id: order.orderId,
        payment_intent: `pi_${order.orderId.slice(0, 8)}`,
        ...fields,
      });

    it("async_payment_succeeded names its order as completed does: two statements", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "succeeded");
      const event = stripeEvent("checkout.session.async_payment_succeeded", session(order));

      expect(await intake.handle(event)).toMatchObject({ outcome: "processed", announced: true });
      expect(f.repository.order(order.orderId).status).toBe("paid");
      expect(f.repository.calls).toEqual(["recordPlacement", "markAnnounced"]);
    });

    it("an order id in capitals is the same order", async () => {
      const order = authorizedAtStripe();
      const event = stripeEvent(
        "checkout.session.completed",
        session(order, {
          client_reference_id: order.orderId.toUpperCase(),
        }),
      );

      expect(await intake.handle(event)).toMatchObject({ outcome: "processed", announced: true });
      expect(f.repository.calls).toEqual(["recordPlacement", "markAnnounced"]);
    });

    it.each([
      ["names no order", { client_reference_id: null }],
      ["names something that is not an order id", { client_reference_id: "order-42" }],
    ])("a session that %s is placed by the general path, the order read first", async (_case, fields) => {
      const order = authorizedAtStripe();
      const event = stripeEvent("checkout.session.completed", session(order, fields));

      expect(await intake.handle(event)).toMatchObject({ outcome: "processed", announced: true });
      expect(f.repository.calls).toEqual(["peek", "recordTransition", "markAnnounced"]);
      // Another replica finds the redelivery in that read, and asks Stripe nothing more.
      expect(await anotherReplica().handle(event)).toEqual({
        outcome: "duplicate",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.calls.slice(3)).toEqual(["peek"]);
      expect(f.stripe.asked).toEqual([order.checkoutSessionId]);
    });

    it("a redelivery another replica has not seen: Stripe, then the one statement, which changes nothing", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      await intake.handle(event);

      expect(await anotherReplica().handle(event)).toEqual({
        outcome: "duplicate",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.calls.slice(2)).toEqual(["recordPlacement"]);
    });

    it("a payment that does not place the order (still processing) goes the general path, asking Stripe once", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "processing");

      expect(await intake.handle(completed(order))).toMatchObject({ outcome: "processed", announced: false });
      expect(f.repository.order(order.orderId).status).toBe("payment_processing");
      expect(f.repository.calls).toEqual(["peek", "recordTransition"]);
      expect(f.stripe.asked).toEqual([order.checkoutSessionId]);
    });

    it("a session that is not a payment is not taken for one, whatever it names", async () => {
      const order = authorizedAtStripe();
      const event = stripeEvent("checkout.session.completed", session(order, { mode: "subscription" }));

      expect(await intake.handle(event)).toMatchObject({ outcome: "ignored" });
      expect(f.repository.calls).toEqual(["peek"]);
      expect(f.stripe.asked).toEqual([]);
    });

    it("an expired session naming its order asks Stripe nothing", async () => {
      const order = f.repository.addOrder();
      const event = stripeEvent("checkout.session.expired", session(order, { payment_intent: null }));

      expect(await intake.handle(event)).toMatchObject({ outcome: "processed" });
      expect(f.repository.order(order.orderId).status).toBe("expired");
      expect(f.repository.calls).toEqual(["peek", "recordTransition"]);
      expect(f.stripe.asked).toEqual([]);
    });

    it("an order this database does not have: one statement, which writes nothing", async () => {
      const stranger = authorizedAtStripe();
      f.repository.orders.delete(stranger.orderId);

      expect(await intake.handle(completed(stranger))).toEqual({
        outcome: "unknown-order",
        announced: false,
      });
      expect(f.repository.calls).toEqual(["recordPlacement"]);
    });

    it("Stripe's answer without a total cannot be checked in the statement: the general path holds it for ops", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "succeeded", {
        amountTotal: null,
        paymentIntent: null,
        paymentStatus: "no_payment_required",
      });

      // A session paid in full by a discount: no PaymentIntent, in the payload or at Stripe.
      const event = stripeEvent("checkout.session.completed", session(order, { payment_intent: null }));
      expect(await intake.handle(event)).toMatchObject({ outcome: "processed", announced: false });
      expect(f.repository.calls).toEqual(["peek", "recordMismatch"]);
      expect(f.repository.order(order.orderId).attentionReason).toContain("session amount_total is unset");
    });

    it("a payment that does not match the order is recorded by the general path after the statement refused it", async () => {
      const order = f.repository.addOrder({ total: 1200 });
      f.stripe.paid({ ...order, total: 1100 }, "requires_capture");

      await intake.handle(completed(order));
      expect(f.repository.calls).toEqual(["recordPlacement", "peek", "recordMismatch"]);
    });

    it("the general path's redelivery sends an announcement still owed, and logs it", async () => {
      const order = authorizedAtStripe();
      const event = stripeEvent("checkout.session.completed", session(order, { client_reference_id: null }));
      f.publisher.refuseNext();
      await expect(intake.handle(event)).rejects.toThrow(AppError);

      expect(await intake.handle(event)).toEqual({
        outcome: "duplicate",
        orderId: order.orderId,
        announced: true,
      });
      expect(f.repository.calls.slice(2)).toEqual(["peek", "findOrder", "markAnnounced"]);
      expect(f.log.lines().filter((line) => line.msg === "shop/order.placed sent")).toEqual([
        expect.objectContaining({ orderId: order.orderId, eventId: event.id }),
      ]);
    });
  });

  describe("when Inngest does not accept shop/order.placed", () => {
    it("fails the delivery (503 naming Inngest: Stripe retries), leaves the order unmarked, and the retry sends it", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      f.publisher.refuseNext();

      const failure = await intake.handle(event).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect(failure).toMatchObject({
        code: "inngest_unavailable",
        httpStatus: 503,
        message: `Inngest did not accept shop/order.placed for order ${order.orderId} (unreachable or refusing it); retry shortly`,
        cause: expect.objectContaining({ message: "Inngest API Error: 502 Bad Gateway" }),
      });
      expect(f.repository.order(order.orderId)).toMatchObject({
        status: "authorized",
        placedEventSentAt: null,
      });
      expect(placedEvents(order.orderId)).toEqual([]);

      // Stripe's retry is a redelivery: its change is on record, the announcement still owed.
      expect(await intake.handle(event)).toEqual({
        outcome: "duplicate",
        orderId: order.orderId,
        announced: true,
      });
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.repository.order(order.orderId).placedEventSentAt).toEqual(expect.any(Date));
      expect(f.transitions).toEqual(["authorized"]);

      // Once sent, no further redelivery sends again, and the process answers it from memory.
      f.repository.unreachable = true;
      expect(await intake.handle(event)).toEqual({ outcome: "duplicate", announced: false });
      expect(placedEvents(order.orderId)).toHaveLength(1);
    });

    it("two deliveries that find the announcement owed at once send it once", async () => {
      const order = authorizedAtStripe();
      order.paymentIntentId = `pi_${order.orderId.slice(0, 8)}`;
      const event = completed(order);
      f.publisher.refuseNext();
      await expect(intake.handle(event)).rejects.toThrow(AppError);

      // Stripe's retry of the event and a lapsed-authorization event (it flags the order, which
      // still owes its announcement) arrive together; the send is held so both are in flight.
      const open = f.publisher.gate();
      const both = Promise.all([
        intake.handle(event),
        intake.handle(
          stripeEvent(
            "payment_intent.canceled",
            paymentIntent({ id: order.paymentIntentId, cancellation_reason: "expired" }),
          ),
        ),
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      open();
      const results = await both;

      expect(results.filter((r) => r.announced)).toHaveLength(1);
      expect(placedEvents(order.orderId)).toHaveLength(1);
      expect(f.repository.order(order.orderId)).toMatchObject({
        placedEventSentAt: expect.any(Date),
        attentionReason: "The card authorization expired before it was captured",
      });
    });

    it("a retry landing on another replica sends it too", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      f.publisher.refuseNext();
      await expect(intake.handle(event)).rejects.toThrow(AppError);

      expect(await anotherReplica().handle(event)).toEqual({
        outcome: "duplicate",
        orderId: order.orderId,
        announced: true,
      });
      expect(placedEvents(order.orderId)).toHaveLength(1);
    });

    it("gives up on an event API that does not answer within the deadline, leaving the announcement owed", async () => {
      f = intakeFakes({ publishTimeoutMs: 20 });
      intake = createStripeIntake(f.deps);
      const order = authorizedAtStripe();
      const event = completed(order);
      f.publisher.hangNext();

      const failure = await intake.handle(event).catch((error: unknown) => error);
      expect(failure).toMatchObject({
        code: "inngest_unavailable",
        cause: expect.objectContaining({ message: "no answer within 20 ms" }),
      });
      expect(f.repository.order(order.orderId).placedEventSentAt).toBeNull();

      expect(await intake.handle(event)).toMatchObject({ outcome: "duplicate", announced: true });
      expect(placedEvents(order.orderId)).toHaveLength(1);
    });

    it("waits for a slow event API that answers within the default deadline", async () => {
      const order = authorizedAtStripe();
      f.publisher.delayNext(50);

      expect(await intake.handle(completed(order))).toMatchObject({ outcome: "processed", announced: true });
      expect(placedEvents(order.orderId)).toHaveLength(1);
    });
  });

  describe("events that change nothing or concern no order of ours", () => {
    it("ignores event types it does not handle, and our own voids, without reading anything", async () => {
      const order = authorizedAtStripe({ paymentIntentId: "pi_ours" });
      f.repository.unreachable = true;

      expect(await intake.handle(stripeEvent("customer.created", { id: "cus_1" }))).toEqual({
        outcome: "ignored",
        announced: false,
      });
      expect(
        await intake.handle(
          stripeEvent(
            "payment_intent.canceled",
            paymentIntent({ id: "pi_ours", cancellation_reason: "abandoned" }),
          ),
        ),
      ).toEqual({ outcome: "ignored", announced: false });
      expect(f.repository.order(order.orderId).attentionReason).toBeNull();
    });

    it("answers 200 for a session that is not ours, writing nothing and asking Stripe nothing", async () => {
      const event = stripeEvent("checkout.session.completed", checkoutSession({ id: "cs_not_ours" }));

      expect(await intake.handle(event)).toEqual({ outcome: "unknown-order", announced: false });
      expect(f.repository.events.size).toBe(0);
      expect(f.stripe.asked).toEqual([]);
      expect(f.publisher.attempts).toBe(0);
    });

    it("answers unknown-order when the order is gone by the time the event is recorded", async () => {
      const order = authorizedAtStripe();
      const lookup = f.deps.lookupCheckout;
      intake = createStripeIntake({
        ...f.deps,
        lookupCheckout: async (id) => {
          f.repository.orders.delete(order.orderId);
          return lookup(id);
        },
      });

      expect(await intake.handle(completed(order))).toEqual({ outcome: "unknown-order", announced: false });
      expect(f.repository.events.size).toBe(0);
      expect(f.publisher.attempts).toBe(0);
    });

    it("ignores a session that is not a one-off payment, recording nothing", async () => {
      const order = f.repository.addOrder();
      const event = stripeEvent(
        "checkout.session.completed",
        checkoutSession({ id: order.checkoutSessionId, mode: "subscription" }),
      );

      expect(await intake.handle(event)).toEqual({
        outcome: "ignored",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.events.size).toBe(0);
      expect(f.repository.order(order.orderId).status).toBe("pending");
      expect(f.transitions).toStrictEqual([]);
    });
  });

  describe("a payment that does not match its order", () => {
    it("holds the order for ops with one alert, places nothing, and a redelivery alerts no more", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "requires_capture", { amountTotal: 1 });
      const event = completed(order);

      expect(await intake.handle(event)).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId)).toMatchObject({
        status: "pending",
        attentionReason: expect.stringContaining("session amount_total is 1, the order's total 1200"),
      });
      expect(f.alerts.notices).toEqual([
        {
          title: "Payment does not match its order: not shipped",
          fields: {
            orderId: order.orderId,
            stripeEvent: event.id,
            type: "checkout.session.completed",
            problems: "session amount_total is 1, the order's total 1200",
            action: expect.stringContaining("refund or fulfil by hand"),
          },
        },
      ]);
      expect(f.publisher.attempts).toBe(0);
      expect(f.transitions).toStrictEqual([]);

      expect(await anotherReplica().handle(event)).toMatchObject({ outcome: "duplicate", announced: false });
      expect(f.alerts.notices).toHaveLength(1);
    });

    it("a payment for another total than the order's is held for ops, whatever the payload claims", async () => {
      const order = f.repository.addOrder({ total: 1200 });
      // Stripe's session and PaymentIntent agree with each other, for 1100: only the order knows.
      f.stripe.paid({ ...order, total: 1100 }, "requires_capture");
      const event = completed(order);

      expect(await intake.handle(event)).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId)).toMatchObject({
        status: "pending",
        attentionReason: expect.any(String),
      });
      expect(f.alerts.notices).toHaveLength(1);
      expect(f.publisher.attempts).toBe(0);
      // Stripe was asked once, though the payment took the general path after the claim failed.
      expect(f.stripe.asked).toEqual([order.checkoutSessionId]);
      expect(await intake.handle(event)).toEqual({ outcome: "duplicate", announced: false });
    });

    it("joins several problems in the alert", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "requires_capture", { amountTotal: 1, currency: "eur" });

      await intake.handle(completed(order));

      expect(f.alerts.notices[0]?.fields.problems).toBe(
        "session amount_total is 1, the order's total 1200; session currency is eur, the order's usd",
      );
    });
  });

  describe("orders that can no longer be paid give their stock back", () => {
    it("an expired session expires the order and releases its hold; a redelivery releases again", async () => {
      const order = f.repository.addOrder();
      const event = stripeEvent("checkout.session.expired", checkoutSession({ id: order.checkoutSessionId }));

      expect(await intake.handle(event)).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId).status).toBe("expired");
      expect(f.holds.released).toEqual([{ orderId: order.orderId, reason: "order is expired" }]);
      expect(f.transitions).toEqual(["expired"]);

      // A crash between recording and releasing is healed by Stripe's redelivery.
      expect(await anotherReplica().handle(event)).toMatchObject({ outcome: "duplicate", announced: false });
      expect(f.holds.released).toHaveLength(2);
      expect(f.stripe.asked).toEqual([]);
    });

    it("a failed delayed payment fails the order and releases its hold", async () => {
      const order = f.repository.addOrder({ status: "payment_processing" });
      const event = stripeEvent(
        "checkout.session.async_payment_failed",
        checkoutSession({ id: order.checkoutSessionId, payment_intent: "pi_delayed" }),
      );

      expect(await intake.handle(event)).toMatchObject({ outcome: "processed", announced: false });
      expect(f.repository.order(order.orderId)).toMatchObject({
        status: "payment_failed",
        paymentIntentId: "pi_delayed",
      });
      expect(f.holds.released).toEqual([{ orderId: order.orderId, reason: "order is payment_failed" }]);
    });

    it("an order that is still payable or placed keeps its hold", async () => {
      const pending = f.repository.addOrder();
      await intake.handle(
        stripeEvent(
          "payment_intent.payment_failed",
          paymentIntent({ id: "pi_declined", metadata: { orderId: pending.orderId } }),
        ),
      );
      const placed = authorizedAtStripe();
      await intake.handle(completed(placed));
      await anotherReplica().handle(completed(placed));

      expect(f.holds.released).toEqual([]);
    });
  });

  describe("payment_intent events", () => {
    it("a lapsed authorization flags the authorized order for ops without moving it", async () => {
      const order = f.repository.addOrder({
        status: "authorized",
        paymentIntentId: "pi_lapsed",
        placedEventSentAt: new Date(),
      });
      const event = stripeEvent(
        "payment_intent.canceled",
        paymentIntent({ id: "pi_lapsed", cancellation_reason: "expired" }),
      );

      expect(await intake.handle(event)).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId)).toMatchObject({
        status: "authorized",
        attentionReason: "The card authorization expired before it was captured",
      });
      expect(f.transitions).toStrictEqual([]);
      expect(f.publisher.attempts).toBe(0);
      expect(await intake.handle(event)).toEqual({ outcome: "duplicate", announced: false });
    });

    it("a void after the money was captured is recorded and changes nothing", async () => {
      const order = f.repository.addOrder({
        status: "fulfilling",
        placedEventSentAt: new Date(),
        paymentIntentId: "pi_captured",
        paymentStatuses: ["captured"],
      });
      const event = stripeEvent(
        "payment_intent.canceled",
        paymentIntent({ id: "pi_captured", cancellation_reason: "requested_by_customer" }),
      );

      expect(await intake.handle(event)).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId).attentionReason).toBeNull();
      expect(f.repository.events.has(event.id)).toBe(true);
    });

    it("a declined card at checkout is noted on the pending order, which stays payable", async () => {
      const order = f.repository.addOrder();
      const event = stripeEvent(
        "payment_intent.payment_failed",
        paymentIntent({
          id: "pi_declined",
          status: "requires_payment_method",
          metadata: { orderId: order.orderId },
          last_payment_error: {
            code: "card_declined",
            decline_code: "insufficient_funds",
            message: "Your card has insufficient funds.",
          } as never,
        }),
      );

      expect(await intake.handle(event)).toEqual({
        outcome: "processed",
        orderId: order.orderId,
        announced: false,
      });
      expect(f.repository.order(order.orderId).status).toBe("pending");
      expect(f.repository.timelineOf(order.orderId)).toEqual([
        {
          orderId: order.orderId,
          kind: "checkout-payment-declined",
          detail: {
            code: "card_declined",
            declineCode: "insufficient_funds",
            message: "Your card has insufficient funds.",
            stripeEvent: event.id,
          },
        },
      ]);
      expect(f.holds.released).toEqual([]);
      expect(f.transitions).toStrictEqual([]);
    });

    it("ignores a payment failure that names no order of ours", async () => {
      f.repository.unreachable = true;
      for (const metadata of [{}, { orderId: "not-a-uuid" }] as Record<string, string>[]) {
        expect(
          await intake.handle(
            stripeEvent("payment_intent.payment_failed", paymentIntent({ id: "pi_other", metadata })),
          ),
        ).toEqual({ outcome: "ignored", announced: false });
      }
    });
  });

  describe("wiring", () => {
    it("moves orders without an onTransition listener (it is optional)", async () => {
      const { onTransition: _unused, ...deps } = f.deps;
      const order = authorizedAtStripe();

      expect(await createStripeIntake(deps).handle(completed(order))).toMatchObject({
        outcome: "processed",
        announced: true,
      });
      expect(f.repository.order(order.orderId).status).toBe("authorized");
    });

    it("leaves no deadline timer behind once the event API has answered", async () => {
      // A forgotten timer per delivery would keep 5 s of timers alive under load, and the process
      // from exiting at once on shutdown.
      jest.useFakeTimers();
      try {
        const order = authorizedAtStripe();
        expect(await intake.handle(completed(order))).toMatchObject({ announced: true });
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });
  });

  /**
   * The log is how ops follow the intake (and what log-based alerts match on): the lines that say
   * an order moved, was flagged or held, or that an event concerned no order of ours.
   */
  describe("what the intake logs", () => {
    const linesSaying = (msg: string) => f.log.lines().filter((line) => line.msg === msg);
    const debug = 20;
    const info = 30;
    const warn = 40;

    it("an event for an order we do not know is a warning naming the event and its key", async () => {
      const event = stripeEvent("checkout.session.expired", checkoutSession({ id: "cs_not_ours" }));
      await intake.handle(event);

      expect(linesSaying("Stripe event for an order we do not know")).toEqual([
        expect.objectContaining({
          level: warn,
          component: "stripe-intake",
          eventId: event.id,
          type: "checkout.session.expired",
          checkoutSessionId: "cs_not_ours",
        }),
      ]);
    });

    it("events that change nothing are logged with the reason", async () => {
      const order = f.repository.addOrder();
      const unhandled = stripeEvent("charge.refunded", { id: "ch_1" });
      const setup = stripeEvent(
        "checkout.session.completed",
        checkoutSession({ id: order.checkoutSessionId, mode: "setup" }),
      );
      await intake.handle(unhandled);
      await intake.handle(setup);

      expect(linesSaying("Stripe event ignored")).toEqual([
        expect.objectContaining({
          level: debug,
          eventId: unhandled.id,
          type: "charge.refunded",
          reason: "event type charge.refunded is not handled",
        }),
      ]);
      expect(linesSaying("Stripe event changes nothing")).toEqual([
        expect.objectContaining({
          level: info,
          orderId: order.orderId,
          eventId: setup.id,
          type: "checkout.session.completed",
          reason: "mode setup",
        }),
      ]);
    });

    it("a move and its announcement are logged once, a move that changed nothing not at all", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      await intake.handle(event);
      await intake.handle(completed(order, "checkout.session.async_payment_succeeded"));

      expect(linesSaying("order moved by Stripe event")).toEqual([
        expect.objectContaining({
          level: info,
          orderId: order.orderId,
          eventId: event.id,
          type: "checkout.session.completed",
          status: "authorized",
          placedEventSent: true,
        }),
      ]);
      // The announcement rides on the move's line: one line per first delivery.
      expect(linesSaying("shop/order.placed sent")).toEqual([]);
      expect(linesSaying("order flagged for ops")).toEqual([]);
    });

    it("a move whose announcement failed says so, and the redelivery that sends it logs the send", async () => {
      const order = authorizedAtStripe();
      const event = completed(order);
      f.publisher.refuseNext();
      await expect(intake.handle(event)).rejects.toThrow(AppError);

      expect(linesSaying("order moved by Stripe event")).toEqual([
        expect.not.objectContaining({ placedEventSent: true }),
      ]);
      await intake.handle(event);
      expect(linesSaying("shop/order.placed sent")).toEqual([
        expect.objectContaining({ level: info, orderId: order.orderId, eventId: event.id }),
      ]);
      expect(linesSaying("order moved by Stripe event")).toHaveLength(1);
    });

    it("a declined card is logged with its code, once it is noted", async () => {
      const pending = f.repository.addOrder();
      const placed = f.repository.addOrder({ status: "authorized", placedEventSentAt: new Date() });
      const declined = (orderId: string) =>
        stripeEvent(
          "payment_intent.payment_failed",
          paymentIntent({
            id: "pi_declined",
            metadata: { orderId },
            last_payment_error: { code: "card_declined", message: "Declined." } as never,
          }),
        );
      const event = declined(pending.orderId);
      await intake.handle(event);
      await intake.handle(declined(placed.orderId));

      expect(linesSaying("payment declined at checkout")).toEqual([
        expect.objectContaining({
          level: info,
          orderId: pending.orderId,
          eventId: event.id,
          code: "card_declined",
        }),
      ]);
      expect(linesSaying("order moved by Stripe event")).toEqual([]);
    });

    it("an order flagged for a lost authorization is a warning; a void that flags nothing is not", async () => {
      const flagged = f.repository.addOrder({
        status: "authorized",
        placedEventSentAt: new Date(),
        paymentIntentId: "pi_lapsed",
      });
      f.repository.addOrder({
        status: "fulfilling",
        placedEventSentAt: new Date(),
        paymentIntentId: "pi_captured",
        paymentStatuses: ["captured"],
      });
      const lapsed = stripeEvent(
        "payment_intent.canceled",
        paymentIntent({ id: "pi_lapsed", cancellation_reason: "expired" }),
      );
      await intake.handle(lapsed);
      await intake.handle(
        stripeEvent(
          "payment_intent.canceled",
          paymentIntent({ id: "pi_captured", cancellation_reason: "expired" }),
        ),
      );

      expect(linesSaying("order flagged for ops")).toEqual([
        expect.objectContaining({
          level: warn,
          orderId: flagged.orderId,
          eventId: lapsed.id,
          reason: "The card authorization expired before it was captured",
        }),
      ]);
      expect(linesSaying("order moved by Stripe event")).toEqual([]);
    });

    it("a payment mismatch is a warning listing the problems", async () => {
      const order = f.repository.addOrder();
      f.stripe.paid(order, "requires_capture", { amountTotal: 1 });
      const event = completed(order);
      await intake.handle(event);

      expect(linesSaying("payment mismatch: order held for ops")).toEqual([
        expect.objectContaining({
          level: warn,
          orderId: order.orderId,
          eventId: event.id,
          problems: ["session amount_total is 1, the order's total 1200"],
        }),
      ]);
      expect(linesSaying("order moved by Stripe event")).toEqual([]);
      expect(linesSaying("order flagged for ops")).toEqual([]);
    });

    it("stock given back is logged with its lines, and a release that gave nothing back is not", async () => {
      const order = f.repository.addOrder();
      const event = stripeEvent("checkout.session.expired", checkoutSession({ id: order.checkoutSessionId }));
      await intake.handle(event);
      await anotherReplica().handle(event);

      expect(f.holds.released).toHaveLength(2);
      expect(linesSaying("stock hold released")).toEqual([
        expect.objectContaining({
          level: info,
          orderId: order.orderId,
          released: [{ sku: "MUG", quantity: 1 }],
        }),
      ]);
    });
  });
});

describe("Stripe intake (in-memory ports): refund and risk events", () => {
  /** A port that answers each event it is handed with `processed` and keeps it. */
  const recordingPort = () => {
    const handled: string[] = [];
    return {
      handled,
      port: {
        handle: async (event: { type: string }) => {
          handled.push(event.type);
          return { outcome: "processed" as const, orderId: "from-the-port", announced: false as const };
        },
      },
    };
  };

  it("hands refund events to the refund port and dispute or Radar events to the risk port, nothing else", async () => {
    const f = intakeFakes();
    const refunds = recordingPort();
    const risks = recordingPort();
    const intake = createStripeIntake({ ...f.deps, refunds: refunds.port, risks: risks.port });
    const order = f.repository.addOrder();
    f.stripe.paid(order, "requires_capture");

    const processed = { outcome: "processed", orderId: "from-the-port", announced: false };
    expect(await intake.handle(stripeEvent("charge.refunded", { id: "ch_1", object: "charge" }))).toEqual(
      processed,
    );
    expect(
      await intake.handle(stripeEvent("charge.dispute.created", { id: "dp_1", object: "dispute" })),
    ).toEqual(processed);
    const checkout = stripeEvent(
      "checkout.session.completed",
      checkoutSession({
        id: order.checkoutSessionId,
        client_reference_id: order.orderId,
        payment_intent: `pi_${order.orderId.slice(0, 8)}`,
      }),
    );
    expect(await intake.handle(checkout)).toMatchObject({ outcome: "processed", orderId: order.orderId });

    expect(refunds.handled).toEqual(["charge.refunded"]);
    expect(risks.handled).toEqual(["charge.dispute.created"]);
  });

  it("without the ports, a refund or dispute event is the intake's own to ignore", async () => {
    const f = intakeFakes();
    const intake = createStripeIntake(f.deps);

    expect(await intake.handle(stripeEvent("charge.refunded", { id: "ch_1", object: "charge" }))).toEqual({
      outcome: "ignored",
      announced: false,
    });
    expect(
      await intake.handle(stripeEvent("charge.dispute.created", { id: "dp_1", object: "dispute" })),
    ).toEqual({ outcome: "ignored", announced: false });
  });
});
