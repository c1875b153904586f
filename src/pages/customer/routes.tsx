import express, { type Request, type Response, Router } from "express";
import { z } from "zod";
import {
  formatMoney,
  lineMoneyOf,
  lineMoneyText,
  moneyRows,
  orderReference,
  toOrderSummary,
} from "../../notifications/templates";
import type { AddressCorrections, PendingCorrection } from "../../orders/correct-address";
import { isAppError } from "../../errors";
import type { OrderQueries } from "../../orders/order-queries";
import type { Reviews } from "../../orders/review-order";
import type { ParcelTracking } from "../../shipping/parcel-tracking";
import type { FreshLinks } from "../../notifications/fresh-link";
import type { CustomerLinks } from "../links";
import { freshLinkRoute, sendExpiredLink } from "./fresh-link";
import { Layout, MessagePage, formatTime, sendFragment, sendPage } from "../layout";
import { customerStatus, isReviewable, isSettled, type CustomerOrder } from "./order-view";
import type { ReturnActions } from "../../returns/returns";
import { isReturnable, returnFormRoutes, type ExchangeOption } from "./return-form";

/** What the customer's pages stand on: query functions and the review's use case, no database. */
export interface CustomerPagesDeps {
  queries: Pick<OrderQueries, "customerOrder">;
  reviews: Reviews;
  tracking: ParcelTracking;
  links: CustomerLinks;
  /** E-mails an expired link's owner a fresh one. */
  freshLinks: FreshLinks;
  /** The address check's corrections (an order held because the carrier cannot deliver there). */
  addresses?: AddressCorrections;
  /** Returns after delivery: the return form behind the order page's signed link. */
  returns?: ReturnActions;
  /** What the return form offers instead of the money. */
  exchangeOptions?: () => Promise<ExchangeOption[]>;
  /** The Checkout Session's page, while it can still be paid (the cancel page's way back). */
  openCheckoutUrl?: (checkoutSessionId: string) => Promise<string | undefined>;
}

const uuid = z.uuid();
const reviewForm = z.object({
  rating: z.coerce.number().int().min(1).max(5),
  comment: z.string().max(2000).default(""),
});

function notFound(res: Response, what = "order"): void {
  // The same answer for "no such order" and "wrong signature": a probe learns nothing.
  sendPage(
    res,
    <MessagePage title="Link not valid">
      <p>This {what} link is not valid. Please use the link from your e-mail or the checkout.</p>
    </MessagePage>,
    404,
  );
}

/** The order behind a signed link, or undefined (after answering 404). */
async function signedOrder(
  deps: CustomerPagesDeps,
  req: Request,
  res: Response,
  purpose: "order" | "review" | "address",
) {
  const id = String(req.params.id);
  const sig = req.query.sig ?? (req.body as { sig?: unknown } | undefined)?.sig;
  const check = uuid.safeParse(id).success ? deps.links.check(purpose, id, sig) : "invalid";
  if (check === "expired") {
    sendExpiredLink(res, id, purpose, String(sig));
    return undefined;
  }
  if (check !== "valid") {
    notFound(res);
    return undefined;
  }
  const order = await deps.queries.customerOrder({ id });
  if (!order) notFound(res);
  return order ?? undefined;
}

function Items(props: { order: CustomerOrder }) {
  const { order } = props;
  // Each line's discount share and tax, as Stripe recorded them with the order (decision 0204).
  const lineMoney = lineMoneyOf(order.moneyBreakdown);
  return (
    <table>
      <thead>
        <tr>
          <th>Item</th>
          <th class="num">Qty</th>
          <th class="num">Price</th>
        </tr>
      </thead>
      <tbody>
        {order.lines.map((line) => (
          <tr key={line.sku}>
            <td>
              {line.name}
              {line.shortQuantity > 0 ? (
                <span class="muted small">
                  {" "}
                  ({line.shortQuantity} not available: not shipped, not charged)
                </span>
              ) : null}
              <LineMoneyNote text={lineMoneyText(lineMoney.get(line.sku), order.currency)} sku={line.sku} />
            </td>
            <td class="num">{line.quantity}</td>
            <td class="num">{formatMoney(line.unitPrice * line.quantity, order.currency)}</td>
          </tr>
        ))}
        {moneyRows(toOrderSummary(order)).map(([label, amount]) => (
          <tr key={label} data-money={label}>
            <td>{label}</td>
            <td />
            <td class="num">{amount}</td>
          </tr>
        ))}
        <tr>
          <td>
            <strong>Total</strong>
          </td>
          <td />
          <td class="num">
            <strong>{formatMoney(order.total, order.currency)}</strong>
          </td>
        </tr>
      </tbody>
    </table>
  );
}

function LineMoneyNote(props: { text: string | null; sku: string }) {
  return props.text ? (
    <div class="muted small" data-line-money={props.sku}>
      {props.text}
    </div>
  ) : null;
}

/** The live part: htmx replaces it every few seconds until the order settles. */
function StatusPanel(props: { order: CustomerOrder; links: CustomerLinks }) {
  const { order, links } = props;
  const status = customerStatus[order.status];
  const settled = isSettled(order.status);
  const poll = settled
    ? {}
    : {
        "hx-get": `/orders/${order.id}/status?sig=${links.sign("order", order.id)}`,
        "hx-trigger": order.status === "shipped" ? "every 10s" : "every 2s",
        "hx-swap": "outerHTML",
      };
  return (
    <section class="card" id="order-status" data-status={order.status} aria-live="polite" {...poll}>
      <h2>
        Status: <span class={`badge ${status.tone}`}>{status.label}</span>
      </h2>
      <p>{status.text}</p>
      {order.shipments.length === 1 && order.shipments[0] ? (
        <p>
          Shipped with {order.shipments[0].carrier}, tracking number{" "}
          <code>{order.shipments[0].trackingNumber}</code>:{" "}
          <a href={links.track(order.shipments[0].trackingNumber)}>track your parcel</a>
        </p>
      ) : order.shipments.length > 1 ? (
        <>
          <p>Shipped in {order.shipments.length} parcels:</p>
          <ul class="parcels">
            {order.shipments.map((parcel) => (
              <li data-parcel={parcel.parcelNumber}>
                Parcel {parcel.parcelNumber} with {parcel.carrier}, tracking number{" "}
                <code>{parcel.trackingNumber}</code>
                {parcel.status === "delivered" ? " (delivered)" : ""}:{" "}
                <a href={links.track(parcel.trackingNumber)}>track this parcel</a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {isReturnable(order.status) ? (
        <p>
          <a href={`/orders/${order.id}/return?sig=${links.sign("order", order.id)}`}>Return items</a>
        </p>
      ) : null}
      {isReviewable(order.status) && !order.review ? (
        <p>
          <a href={links.review(order.id)}>Review your order</a>
        </p>
      ) : null}
      {settled ? null : <p class="muted small">This page updates itself.</p>}
    </section>
  );
}

/**
 * What became of the customer's money: the card hold released on a cancelled order, every refund
 * (a partial one from ops, a return's, one made in Stripe's dashboard), and what they paid in the end.
 */
function MoneyPanel(props: { order: CustomerOrder }) {
  const { order } = props;
  const payment = order.payment;
  if (!payment) return null;
  const money = (amount: number) => formatMoney(amount, order.currency);
  const sum = (status: string) =>
    order.refunds
      .filter((refund) => refund.status === status)
      .reduce((total, refund) => total + refund.amount, 0);
  // A refund the workflow made itself (a cancel after capture, a line out of stock) is on the
  // payment only, with no row of its own: shown as what the payment says beyond the rows.
  const unlisted = Math.max(0, payment.amountRefunded - sum("succeeded"));
  const refunded = sum("succeeded") + sum("pending") + unlisted;
  const charged = payment.amountCaptured;
  const hasRefunds = order.refunds.length > 0 || unlisted > 0;
  const unlistedLabel =
    order.status === "cancelled"
      ? "Refund: order cancelled"
      : order.status === "cancelled_out_of_stock"
        ? "Refund: out of stock"
        : "Refund";
  return (
    <section class="card" id="order-money">
      <h2>Payment</h2>
      {payment.status === "voided" ? (
        <p class="hold-released">
          The hold of <strong>{money(payment.amountAuthorized)}</strong> on your card has been released: you
          were not charged. Depending on your bank, the hold can take a few days to disappear from your
          statement.
        </p>
      ) : payment.status === "authorized" ? (
        <p>
          Your card is authorised for <strong>{money(payment.amountAuthorized)}</strong>; it is charged when
          your order ships.
        </p>
      ) : null}
      {charged > 0 || hasRefunds ? (
        <table>
          <tbody>
            <tr>
              <td>Charged to your card</td>
              <td class="num">{money(charged)}</td>
            </tr>
            {order.refunds.map((refund) => (
              <tr key={refund.id} class="refund" data-amount={refund.amount}>
                <td>
                  {refund.reason?.startsWith("return ") ? "Refund for your return" : "Refund"} ·{" "}
                  <span class="muted small">
                    {formatTime(refund.createdAt)}
                    {refund.status === "pending" ? " · on its way" : ""}
                  </span>
                </td>
                <td class="num">−{money(refund.amount)}</td>
              </tr>
            ))}
            {unlisted > 0 ? (
              <tr class="refund" data-amount={unlisted}>
                <td>{unlistedLabel}</td>
                <td class="num">−{money(unlisted)}</td>
              </tr>
            ) : null}
            {hasRefunds ? (
              <tr>
                <td>
                  <strong>You paid in the end</strong>
                </td>
                <td class="num">
                  <strong>{money(Math.max(0, charged - refunded))}</strong>
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      ) : null}
      {hasRefunds ? (
        <p class="muted small">
          A refund can take 5–10 days to appear on your statement, depending on your bank.
        </p>
      ) : null}
    </section>
  );
}

function OrderPage(props: {
  order: CustomerOrder;
  links: CustomerLinks;
  heading: string;
  justPaid?: boolean;
}) {
  const { order } = props;
  return (
    <Layout title={`Order ${orderReference(order.id)}`} narrow live>
      <h1>{props.heading}</h1>
      <p class="muted">
        Order <strong>{orderReference(order.id)}</strong> · placed {formatTime(order.createdAt)}
      </p>
      {props.justPaid ? (
        <p class="next-email">
          Keep this page&apos;s address to follow your order. We will e-mail <strong>{order.email}</strong>{" "}
          when it ships, with its tracking number and a link back here.
        </p>
      ) : (
        <p class="muted small">E-mails about this order go to {order.email}.</p>
      )}
      <StatusPanel order={order} links={props.links} />
      <section class="card">
        <h2>Items</h2>
        <Items order={order} />
      </section>
      <MoneyPanel order={order} />
    </Layout>
  );
}

export function customerPages(deps: CustomerPagesDeps): Router {
  const router = Router();
  const { queries, links } = deps;
  router.use(freshLinkRoute(deps));
  if (deps.returns) {
    router.use(
      returnFormRoutes({
        returns: deps.returns,
        links,
        ...(deps.exchangeOptions ? { exchangeOptions: deps.exchangeOptions } : {}),
        signedOrder: (req, res) => signedOrder(deps, req, res, "order"),
      }),
    );
  }

  // Stripe sends the customer here with the session id: long, random and known only to them.
  router.get("/checkout/success", async (req, res) => {
    const sessionId = typeof req.query.session_id === "string" ? req.query.session_id : "";
    const order = sessionId ? await queries.customerOrder({ checkoutSessionId: sessionId }) : null;
    if (!order) {
      notFound(res, "checkout");
      return;
    }
    sendPage(res, <OrderPage order={order} links={links} heading="Thank you for your order" justPaid />);
  });

  router.get("/checkout/cancelled", async (req, res) => {
    const id = String(req.query.order_id ?? "");
    const check = uuid.safeParse(id).success
      ? links.check("checkout-cancelled", id, req.query.sig)
      : "invalid";
    if (check === "expired") {
      sendExpiredLink(res, id, "checkout-cancelled", String(req.query.sig));
      return;
    }
    if (check !== "valid") {
      notFound(res, "checkout");
      return;
    }
    const order = await queries.customerOrder({ id });
    if (!order) {
      notFound(res, "checkout");
      return;
    }
    const backTo =
      order.status === "pending" && order.checkoutSessionId && deps.openCheckoutUrl
        ? await deps.openCheckoutUrl(order.checkoutSessionId).catch(() => undefined)
        : undefined;
    sendPage(
      res,
      <Layout title="Checkout cancelled" narrow>
        <h1>Checkout cancelled</h1>
        <div class="card">
          <p>
            You left the payment page, so order <strong>{orderReference(order.id)}</strong> is not paid and
            nothing has been charged.
          </p>
          <Items order={order} />
          <p>
            {backTo ? (
              <a class="button" href={backTo}>
                Return to payment
              </a>
            ) : (
              <span class="muted">This checkout can no longer be paid; please place the order again.</span>
            )}{" "}
            <a class="button secondary" href={links.order(order.id)}>
              See the order
            </a>
          </p>
        </div>
      </Layout>,
    );
  });

  router.get("/orders/:id", async (req, res) => {
    const order = await signedOrder(deps, req, res, "order");
    if (order) sendPage(res, <OrderPage order={order} links={links} heading="Your order" />);
  });

  router.get("/orders/:id/status", async (req, res) => {
    const order = await signedOrder(deps, req, res, "order");
    if (order) sendFragment(res, <StatusPanel order={order} links={links} />);
  });

  router.get("/orders/:id/review", async (req, res) => {
    const order = await signedOrder(deps, req, res, "review");
    if (!order) return;
    if (order.review) {
      sendPage(res, <ReviewThanks order={order} links={links} />);
      return;
    }
    if (!isReviewable(order.status)) {
      sendPage(
        res,
        <MessagePage title="Not ready for a review">
          <p>Order {orderReference(order.id)} has not shipped, so there is nothing to review yet.</p>
        </MessagePage>,
        409,
      );
      return;
    }
    sendPage(res, <ReviewForm order={order} sig={links.sign("review", order.id)} />);
  });

  router.post(
    "/orders/:id/review",
    express.urlencoded({ extended: false, limit: "10kb" }),
    async (req, res) => {
      const order = await signedOrder(deps, req, res, "review");
      if (!order) return;
      const refuse = (title: string, text: string) =>
        sendPage(
          res,
          <MessagePage title={title}>
            <p>{text}</p>
            <p>
              <a href={links.order(order.id)}>Back to your order</a>
            </p>
          </MessagePage>,
          409,
        );
      if (order.review) return refuse("Already reviewed", "This order has a review already; thank you.");
      if (!isReviewable(order.status))
        return refuse("Not ready for a review", "This order has not shipped yet.");
      const form = reviewForm.safeParse(req.body);
      if (!form.success) {
        sendPage(
          res,
          <ReviewForm order={order} sig={links.sign("review", order.id)} error="Choose 1 to 5 stars." />,
          400,
        );
        return;
      }
      const submitted = await deps.reviews.submit({ orderId: order.id, ...form.data });
      if (!submitted.accepted) {
        if (submitted.reason === "not-reviewable")
          return refuse("Not ready for a review", "This order has not shipped yet.");
        if (submitted.reason === "not-found") return notFound(res);
        return refuse("Already reviewed", "This order has a review already; thank you.");
      }
      res.redirect(303, links.review(order.id));
    },
  );

  router.get("/orders/:id/address", async (req, res) => {
    const order = await signedOrder(deps, req, res, "address");
    if (!order) return;
    const pending = (await deps.addresses?.pending(order.id)) ?? null;
    if (!pending) {
      sendPage(
        res,
        <MessagePage title="Nothing to correct">
          <p>The delivery address of order {orderReference(order.id)} needs no correction.</p>
          <p>
            <a href={links.order(order.id)}>Back to your order</a>
          </p>
        </MessagePage>,
      );
      return;
    }
    sendPage(res, <AddressForm order={order} pending={pending} sig={links.sign("address", order.id)} />);
  });

  router.post(
    "/orders/:id/address",
    express.urlencoded({ extended: false, limit: "10kb" }),
    async (req, res) => {
      const order = await signedOrder(deps, req, res, "address");
      if (!order) return;
      const pending = (await deps.addresses?.pending(order.id)) ?? null;
      if (!pending || !deps.addresses) {
        sendPage(
          res,
          <MessagePage title="Nothing to correct">
            <p>The delivery address of order {orderReference(order.id)} needs no correction.</p>
          </MessagePage>,
          409,
        );
        return;
      }
      try {
        await deps.addresses.correct(order.id, req.body);
      } catch (error) {
        if (!isAppError(error) || error.httpStatus >= 500) throw error;
        sendPage(
          res,
          <AddressForm
            order={order}
            pending={pending}
            sig={links.sign("address", order.id)}
            error={error.message}
          />,
          error.httpStatus,
        );
        return;
      }
      sendPage(
        res,
        <MessagePage title="Thank you: address corrected">
          <p>We will ship order {orderReference(order.id)} to the corrected address.</p>
          <p>
            <a href={links.order(order.id)}>Follow your order</a>
          </p>
        </MessagePage>,
      );
    },
  );

  router.get("/track/:number", async (req, res) => {
    const shipment = await deps.tracking.find(String(req.params.number));
    if (!shipment) {
      notFound(res, "tracking");
      return;
    }
    const events = [
      { at: shipment.createdAt, text: `Label created; parcel handed to ${shipment.carrier}` },
      ...(shipment.trackerStatus && !shipment.deliveredAt
        ? [{ at: shipment.updatedAt, text: `Carrier reports: ${shipment.trackerStatus.replace(/_/g, " ")}` }]
        : []),
      ...(shipment.deliveredAt ? [{ at: shipment.deliveredAt, text: "Delivered" }] : []),
    ].reverse();
    const carrierPage = shipment.trackingUrl.includes(`/track/${shipment.trackingNumber}`)
      ? undefined
      : shipment.trackingUrl;
    sendPage(
      res,
      <Layout title={`Tracking ${shipment.trackingNumber}`} narrow>
        <h1>Parcel tracking</h1>
        <div class="card">
          <p>
            Tracking number <code>{shipment.trackingNumber}</code> with {shipment.carrier}:{" "}
            <span class={`badge ${shipment.status === "delivered" ? "ok" : ""}`}>
              {shipment.status === "delivered" ? "Delivered" : "In transit"}
            </span>
          </p>
          {carrierPage ? (
            <p>
              <a href={carrierPage}>Follow it on {shipment.carrier}'s site</a>
            </p>
          ) : null}
          <h2>Carrier events</h2>
          <ul class="steps">
            {events.map((event) => (
              <li key={event.text}>
                <span class="muted small">{formatTime(event.at)}</span> · {event.text}
              </li>
            ))}
          </ul>
        </div>
      </Layout>,
    );
  });

  return router;
}

function AddressForm(props: {
  order: CustomerOrder;
  pending: PendingCorrection;
  sig: string;
  error?: string;
}) {
  const { order, pending } = props;
  const value = (field: keyof NonNullable<PendingCorrection["address"]>) => pending.address?.[field] ?? "";
  const input = (name: keyof NonNullable<PendingCorrection["address"]>, label: string, required = false) => (
    <p>
      <label>
        {label} <input name={name} value={value(name)} maxLength={200} required={required} />
      </label>
    </p>
  );
  return (
    <Layout title="Correct your delivery address" narrow>
      <h1>Correct your delivery address</h1>
      <div class="card">
        <p>
          The carrier cannot deliver order {orderReference(order.id)} to this address. The carrier says:{" "}
          <strong class="carrier-message">{pending.carrierMessage}</strong>
        </p>
        {props.error ? <p class="error">{props.error}</p> : null}
        <form method="post" action={`/orders/${order.id}/address?sig=${props.sig}`}>
          {input("name", "Name")}
          {input("line1", "Street", true)}
          {input("line2", "Apartment, suite (optional)")}
          {input("city", "City", true)}
          {input("state", "State or region")}
          {input("postalCode", "Postal code", true)}
          {input("country", "Country (two letters)", true)}
          <button type="submit">Save the address</button>
        </form>
      </div>
    </Layout>
  );
}

function ReviewForm(props: { order: CustomerOrder; sig: string; error?: string }) {
  const { order } = props;
  return (
    <Layout title="Review your order" narrow>
      <h1>How was your order?</h1>
      <div class="card">
        <p class="muted">
          Order {orderReference(order.id)}: {order.lines.map((line) => line.name).join(", ")}
        </p>
        {props.error ? <p class="error">{props.error}</p> : null}
        <form method="post" action={`/orders/${order.id}/review?sig=${props.sig}`}>
          <fieldset class="stars">
            <legend>Rating</legend>
            {[1, 2, 3, 4, 5].map((rating) => (
              <label key={rating}>
                <input type="radio" name="rating" value={String(rating)} required /> {"★".repeat(rating)}
              </label>
            ))}
          </fieldset>
          <p>
            <label>
              Comment (optional)
              <br />
              <textarea name="comment" rows={4} cols={40} maxLength={2000} />
            </label>
          </p>
          <button type="submit">Send review</button>
        </form>
      </div>
    </Layout>
  );
}

function ReviewThanks(props: { order: CustomerOrder; links: CustomerLinks }) {
  const review = props.order.review;
  return (
    <MessagePage title="Thank you for your review">
      <p>
        You rated order {orderReference(props.order.id)} {"★".repeat(review?.rating ?? 0)} ({review?.rating}{" "}
        of 5).
      </p>
      {review?.comment ? <blockquote>{review.comment}</blockquote> : null}
      <p>
        <a href={props.links.order(props.order.id)}>Back to your order</a>
      </p>
    </MessagePage>
  );
}
