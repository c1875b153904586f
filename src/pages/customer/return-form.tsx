import { customerRules } from "../../shared/order-model";
import express, { Router, type Request, type Response } from "express";
import { z } from "zod";
import { AppError, isAppError } from "../../errors";
import { formatMoney, orderReference } from "../../notifications/templates";
import { returnReasons } from "../../returns/return-policy";
import type { ReturnActions, ReturnView } from "../../returns/returns";
import type { CustomerLinks } from "../links";
import { Layout, MessagePage, formatTime, sendPage } from "../layout";
import type { CustomerOrder } from "./order-view";

const reasonLabels: Record<(typeof returnReasons)[number], string> = {
  damaged: "It arrived damaged",
  wrong_item: "I received the wrong item",
  not_as_described: "It is not as described",
  no_longer_needed: "I no longer need it",
  other: "Another reason",
};

const statusWords: Record<ReturnView["status"], string> = {
  requested: "asked for: we will look at it and e-mail you the label",
  approved: "accepted: the return label is on its way to your e-mail, or there already",
  received: "back with us: your refund is on its way",
  closed: "done",
  rejected: "not accepted",
  cancelled: "cancelled",
};

/** Returns that hold their units (as the use case counts them, src/returns/return-records.ts). */
const holdingStatuses: readonly ReturnView["status"][] = ["requested", "approved", "received", "closed"];

/** Units of each SKU still returnable: shipped, less those in returns that hold them. */
function leftToReturn(order: CustomerOrder, returns: ReturnView[]): Map<string, number> {
  const left = new Map(order.lines.map((line) => [line.sku, line.quantity - line.shortQuantity]));
  for (const view of returns) {
    if (!holdingStatuses.includes(view.status)) continue;
    for (const line of view.lines) left.set(line.sku, (left.get(line.sku) ?? 0) - line.quantity);
  }
  return left;
}

/** Orders a customer may return from: delivered (the window and quantities are the use case's to check). */
export const isReturnable = (status: CustomerOrder["status"]) =>
  (customerRules["ask for a return"].statuses as readonly string[]).includes(status);

/** A product a customer may take instead of the money: on sale, physical, in stock. */
export interface ExchangeOption {
  sku: string;
  name: string;
  unitPrice: number;
  currency: string;
}

function ReturnForm(props: {
  order: CustomerOrder;
  exchanges: ExchangeOption[];
  sig: string;
  returns: ReturnView[];
  error?: string;
  done?: boolean;
}) {
  const { order } = props;
  // The card checkout saved: a dearer exchange's difference is charged to it off-session.
  const savedCard = Boolean(order.stripeCustomerId && order.paymentMethodId);
  const nameOf = (sku: string) => order.lines.find((line) => line.sku === sku)?.name ?? sku;
  const left = leftToReturn(order, props.returns);
  const money = (amount: number) => formatMoney(amount, order.currency);
  return (
    <Layout title={`Return items of order ${orderReference(order.id)}`} narrow>
      <h1>Return items</h1>
      <p class="muted">Order {orderReference(order.id)}</p>
      {props.error ? (
        <p class="notice bad" role="alert">
          {props.error}
        </p>
      ) : null}
      {props.done ? (
        <p class="notice" role="status">
          Your return is registered. The return label comes by e-mail to {order.email}.
        </p>
      ) : null}
      {props.returns.length > 0 ? (
        <section class="card" id="your-returns">
          <h2>Your returns</h2>
          <ul>
            {props.returns.map((view) => (
              <li data-status={view.status}>
                {view.lines.map((line) => `${line.quantity} × ${nameOf(line.sku)}`).join(", ")},{" "}
                {statusWords[view.status]}
                {view.refundAmount !== null
                  ? ` (refunded ${formatMoney(view.refundAmount, order.currency)})`
                  : ""}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <form
        class="card"
        method="post"
        action={`/orders/${order.id}/return?sig=${props.sig}`}
        id="return-form"
      >
        <h2>What are you sending back?</h2>
        {order.lines.map((line) => {
          const returnable = Math.max(0, left.get(line.sku) ?? 0);
          const shipped = line.quantity - line.shortQuantity;
          const options = props.exchanges.filter(
            (option) =>
              option.sku !== line.sku &&
              (option.unitPrice <= line.unitPrice || savedCard) &&
              option.currency.toLowerCase() === order.currency.toLowerCase(),
          );
          return (
            <fieldset class="return-line" key={line.sku} data-sku={line.sku}>
              <legend>
                <strong>{line.name}</strong> <span class="muted">({money(line.unitPrice)} each)</span>
              </legend>
              {returnable === 0 ? (
                <p class="muted">
                  {shipped === 0 ? "Not shipped, so nothing to return." : "All returned already."}
                </p>
              ) : (
                <>
                  <p>
                    <label>
                      Quantity{" "}
                      <input
                        name={`qty_${line.sku}`}
                        type="number"
                        min="0"
                        max={String(returnable)}
                        value="0"
                        size={3}
                      />
                    </label>{" "}
                    <span class="returnable">
                      of {returnable} you can return
                      {returnable < shipped ? ` (${shipped - returnable} already returned)` : ""}
                    </span>
                  </p>
                  {/* In the order's currency; a dearer one only when checkout saved the card to charge the difference to. */}
                  <p>
                    <label>
                      Instead{" "}
                      <select name={`exchange_${line.sku}`}>
                        <option value="">my money back</option>
                        {options.map((option) => (
                          <option value={option.sku}>
                            {option.name} ({money(option.unitPrice)}
                            {option.unitPrice > line.unitPrice
                              ? `: ${money(option.unitPrice - line.unitPrice)} more, charged to your card`
                              : option.unitPrice < line.unitPrice
                                ? `: ${money(line.unitPrice - option.unitPrice)} less, refunded to your card`
                                : ": same price"}
                            )
                          </option>
                        ))}
                      </select>
                    </label>
                  </p>
                </>
              )}
            </fieldset>
          );
        })}
        {props.exchanges.length > 0 ? (
          <p class="muted small">
            An exchange for something cheaper refunds the difference to your card; for something dearer, the
            difference is charged to the card you paid with.
          </p>
        ) : null}
        <p>
          <label>
            Why?{" "}
            <select name="reason" required>
              {/* No reason is chosen for the customer: the form asks until they pick one. */}
              <option value="" selected disabled>
                Choose a reason
              </option>
              {returnReasons.map((reason) => (
                <option value={reason}>{reasonLabels[reason]}</option>
              ))}
            </select>
          </label>
        </p>
        <p>
          <label>
            Anything to add? <input name="note" maxLength={500} size={40} />
          </label>
        </p>
        <p>
          <button type="submit">Ask for a return label</button>
        </p>
      </form>
    </Layout>
  );
}

/** The quantities of the form (`qty_<sku>`), the lines with more than none. */
function linesOf(body: Record<string, unknown>, order: CustomerOrder) {
  return order.lines.flatMap((line) => {
    const raw = body[`qty_${line.sku}`];
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "" || text === "0") return [];
    if (!/^\d{1,5}$/.test(text))
      throw new AppError("validation_failed", `Give a whole number for ${line.name}`);
    const exchange = body[`exchange_${line.sku}`];
    const exchangeSku = typeof exchange === "string" ? exchange.trim().slice(0, 100) : "";
    return [{ sku: line.sku, quantity: Number(text), ...(exchangeSku ? { exchangeSku } : {}) }];
  });
}

/**
 * The customer's return form, `/orders/:id/return?sig=…` (the order page's signed link: whoever may
 * see the order may return from it): lines, quantities and a reason, then the same use case ops
 * call, `by: "customer"`. A refusal (outside the window, too many, not delivered) shows the form
 * again with the reason and its status, and records nothing.
 */
export function returnFormRoutes(deps: {
  returns: ReturnActions;
  links: CustomerLinks;
  /** Products to offer instead of the money (the catalog's query); none: no exchange offered. */
  exchangeOptions?: () => Promise<ExchangeOption[]>;
  signedOrder(req: Request, res: Response): Promise<CustomerOrder | undefined>;
}): Router {
  const router = Router();
  const { returns, links } = deps;

  const notReturnable = (res: Response, order: CustomerOrder) =>
    sendPage(
      res,
      <MessagePage title="Nothing to return yet">
        <p>
          Order {orderReference(order.id)} has not been delivered, so there is nothing to return yet (placed{" "}
          {formatTime(order.createdAt)}).
        </p>
        <p>
          <a href={links.order(order.id)}>Back to your order</a>
        </p>
      </MessagePage>,
      409,
    );

  router.get("/orders/:id/return", async (req, res) => {
    const order = await deps.signedOrder(req, res);
    if (!order) return;
    if (!isReturnable(order.status)) return notReturnable(res, order);
    sendPage(
      res,
      <ReturnForm
        order={order}
        sig={links.sign("order", order.id)}
        returns={await returns.list(order.id)}
        exchanges={(await deps.exchangeOptions?.()) ?? []}
        done={req.query.done === "1"}
      />,
    );
  });

  router.post(
    "/orders/:id/return",
    express.urlencoded({ extended: false, limit: "10kb" }),
    async (req, res) => {
      const order = await deps.signedOrder(req, res);
      if (!order) return;
      if (!isReturnable(order.status)) return notReturnable(res, order);
      const body = req.body as Record<string, unknown>;
      try {
        const reason = z.enum(returnReasons).safeParse(body.reason);
        if (!reason.success) throw new AppError("validation_failed", "Choose why you are returning it");
        const note =
          typeof body.note === "string" && body.note.trim() !== ""
            ? body.note.trim().slice(0, 500)
            : undefined;
        await returns.request({
          orderId: order.id,
          lines: linesOf(body, order),
          reason: reason.data,
          note,
          by: "customer",
        });
      } catch (error) {
        if (!isAppError(error) || error.httpStatus >= 500) throw error;
        sendPage(
          res,
          <ReturnForm
            order={order}
            sig={links.sign("order", order.id)}
            returns={await returns.list(order.id)}
            exchanges={(await deps.exchangeOptions?.()) ?? []}
            error={error.message}
          />,
          error.httpStatus,
        );
        return;
      }
      res.redirect(303, `/orders/${order.id}/return?sig=${links.sign("order", order.id)}&done=1`);
    },
  );

  return router;
}
