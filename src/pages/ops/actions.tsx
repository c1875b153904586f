import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { AppError, isAppError } from "../../errors";
import { formatMoney, orderReference } from "../../notifications/templates";
import { currencyDigits, parseMajorUnits } from "../../shared/money";
import { holdReasonLabels, opsHoldReasons } from "../../orders/hold-order";
import type { OrderDetails } from "../../orders/order-details";
import { sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout } from "./layout";
import { orderOr404, showOrder } from "./order-page";

const actions = ["cancel", "refund", "resend", "redrive", "hold", "release-hold", "reship"] as const;
type Action = (typeof actions)[number];
const isAction = (name: string): name is Action => (actions as readonly string[]).includes(name);

const uuid = z.uuid();
/** The refund form's amount, typed in the order currency's major unit ("12.50"); empty: all that is left. */
function refundAmountOf(typed: unknown, currency: string): number | undefined {
  const text = typeof typed === "string" ? typed.trim() : "";
  if (text === "") return undefined;
  const parsed = parseMajorUnits(text, currency);
  if (!parsed.ok) throw new AppError("validation_failed", parsed.message);
  if (parsed.minorUnits <= 0) throw new AppError("validation_failed", "The amount must be more than zero");
  return parsed.minorUnits;
}

/** What the browser lets through: digits, and as many decimals as the currency has. */
const amountPattern = (currency: string) => {
  const digits = currencyDigits(currency);
  return digits === 0 ? "[0-9]+" : `[0-9]+([.,][0-9]{1,${digits}})?`;
};

function ConfirmPage(props: {
  csrf: string;
  order: OrderDetails;
  action: Action;
  emailId?: string;
  template?: string;
  shipment?: OrderDetails["shipments"][number];
}) {
  const { order, action } = props;
  const titles: Record<Action, string> = {
    cancel: "Cancel this order?",
    refund: "Refund this order?",
    resend: `Re-send the ${props.template ?? ""} e-mail?`,
    redrive: "Re-drive this order?",
    hold: "Hold this order?",
    "release-hold": "Release this order's hold?",
    reship: `Re-ship parcel ${props.shipment?.parcelNumber ?? ""}?`,
  };
  const target =
    action === "resend"
      ? `/ops/orders/${order.id}/emails/${props.emailId}/resend`
      : action === "reship"
        ? `/ops/orders/${order.id}/shipments/${props.shipment?.id ?? ""}/reship`
        : `/ops/orders/${order.id}/${action}`;
  return (
    <OpsLayout title={titles[action]} csrf={props.csrf}>
      <h1>{titles[action]}</h1>
      <form class="card" method="post" action={target}>
        <input type="hidden" name="_csrf" value={props.csrf} />
        <p>
          Order <strong>{orderReference(order.id)}</strong> ({order.status},{" "}
          {formatMoney(order.total, order.currency)}, {order.email}).
        </p>
        {action === "refund" && order.payment ? (
          <p class="refundable">
            Captured {formatMoney(order.payment.amountCaptured, order.currency)}, refunded{" "}
            {formatMoney(order.payment.amountRefunded, order.currency)}: up to{" "}
            <strong>
              {formatMoney(
                Math.max(0, order.payment.amountCaptured - order.payment.amountRefunded),
                order.currency,
              )}
            </strong>{" "}
            left to refund.
          </p>
        ) : null}
        {action === "refund" ? (
          <p>
            <label>
              Amount in {order.currency.toUpperCase()} (e.g.{" "}
              {currencyDigits(order.currency) === 0 ? "1250" : "12.50"}; empty: everything captured and not
              yet refunded){" "}
              <input
                name="amount"
                inputMode={currencyDigits(order.currency) === 0 ? "numeric" : "decimal"}
                pattern={amountPattern(order.currency)}
                size={10}
              />
            </label>
          </p>
        ) : null}
        {action === "hold" ? (
          <p>
            <label>
              Reason{" "}
              <select name="reason" required>
                {opsHoldReasons.map((reason) => (
                  <option value={reason}>{holdReasonLabels[reason]}</option>
                ))}
              </select>
            </label>{" "}
            <label>
              Note <input name="note" maxLength={500} size={40} />
            </label>
          </p>
        ) : null}
        {action === "release-hold" && order.hold ? (
          <p>
            On hold:{" "}
            {holdReasonLabels[order.hold.reason as keyof typeof holdReasonLabels] ?? order.hold.reason}
            {order.hold.note ? ` (${order.hold.note})` : ""}. Released, it goes on to buy the label.
          </p>
        ) : null}
        {action === "reship" && props.shipment ? (
          <p>
            Buys a new label for parcel {props.shipment.parcelNumber} ({props.shipment.carrier}{" "}
            <code>{props.shipment.trackingNumber}</code>, carrier:{" "}
            {props.shipment.trackerStatus ?? "no scan yet"}), hands the old label back to the carrier (ops are
            told if it was scanned) and e-mails the customer the new tracking number.
          </p>
        ) : null}
        {action === "cancel" || action === "refund" ? (
          <p>
            <label>
              Reason <input name="reason" maxLength={500} size={40} />
            </label>
          </p>
        ) : null}
        <p>
          <button class="danger" type="submit">
            Confirm
          </button>{" "}
          <a class="button secondary" href={`/ops/orders/${order.id}`}>
            Back
          </a>
        </p>
      </form>
    </OpsLayout>
  );
}

const field = (req: Request, name: string): string | undefined => {
  const value = (req.body as Record<string, unknown>)[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim().slice(0, 500) : undefined;
};

/**
 * The order actions: a confirm page each, then the POST that calls the action's use case (the
 * same function the admin API calls) and shows the order again with what happened, or why not.
 */
export function actionRoutes(deps: OpsConsoleDeps): Router {
  const router = Router();

  router.get("/ops/orders/:id/confirm/:action", async (req, res) => {
    const action = String(req.params.action);
    const order = await orderOr404(deps, req, res);
    if (!order) return;
    if (!isAction(action)) {
      res.status(404).type("text").send("No such action");
      return;
    }
    const email = action === "resend" ? order.emails.find((e) => e.id === req.query.email) : undefined;
    if (action === "resend" && !email) {
      res.status(404).type("text").send("No such e-mail");
      return;
    }
    const shipment =
      action === "reship" ? order.shipments.find((s) => s.id === req.query.shipment) : undefined;
    if (action === "reship" && !shipment) {
      res.status(404).type("text").send("No such shipment");
      return;
    }
    sendPage(
      res,
      <ConfirmPage
        csrf={csrfOf(deps, req)}
        order={order}
        action={action}
        {...(email ? { emailId: email.id, template: email.template } : {})}
        {...(shipment ? { shipment } : {})}
      />,
    );
  });

  /** Runs an action and shows the order again with what happened (or why not). */
  async function act(req: Request, res: Response, done: string, run: (orderId: string) => Promise<unknown>) {
    const orderId = String(req.params.id);
    if (!uuid.safeParse(orderId).success) {
      await showOrder(deps, req, res);
      return;
    }
    try {
      await run(orderId);
    } catch (error) {
      if (!isAppError(error) || error.httpStatus >= 500) throw error;
      // POST, then 303 (docs/pages.md): the refusal lands on the order page, which a reload
      // shows again without asking twice.
      res.redirect(303, `/ops/orders/${orderId}?refused=${encodeURIComponent(error.message)}`);
      return;
    }
    res.redirect(303, `/ops/orders/${orderId}?done=${encodeURIComponent(done)}`);
  }

  router.post("/ops/orders/:id/cancel", (req, res) =>
    act(req, res, "Cancellation requested.", (orderId) =>
      deps.actions.cancel({ orderId, reason: field(req, "reason"), by: "ops-console" }),
    ),
  );
  router.post("/ops/orders/:id/refund", (req, res) =>
    act(req, res, "Refund requested.", async (orderId) => {
      const order = await deps.queries.details(orderId);
      if (!order) throw new AppError("order_not_found", "No such order");
      const amount = refundAmountOf((req.body as { amount?: unknown }).amount, order.currency);
      try {
        return await deps.actions.refund({
          orderId,
          ...(amount !== undefined ? { amount } : {}),
          reason: field(req, "reason"),
          by: "ops-console",
        });
      } catch (error) {
        // The use case counts in minor units; ops typed, and read, the currency's own.
        const details = isAppError(error)
          ? (error.details as { refundable?: unknown } | undefined)
          : undefined;
        if (
          isAppError(error) &&
          error.code === "refund_exceeds_captured" &&
          typeof details?.refundable === "number"
        ) {
          const left = formatMoney(Math.max(0, details.refundable), order.currency);
          throw new AppError(
            "refund_exceeds_captured",
            details.refundable > 0
              ? `${amount !== undefined ? formatMoney(amount, order.currency) : "That"} is more than is left to refund: ${left}`
              : "This order has been refunded in full already",
            { details },
          );
        }
        throw error;
      }
    }),
  );
  router.post("/ops/orders/:id/redrive", (req, res) =>
    act(req, res, "Re-drive requested.", (orderId) => deps.actions.redrive({ orderId, by: "ops-console" })),
  );
  router.post("/ops/orders/:id/hold", (req, res) =>
    act(req, res, "Order held.", (orderId) => {
      const reason = z.enum(opsHoldReasons).safeParse(field(req, "reason"));
      if (!reason.success)
        throw new AppError("validation_failed", `The reason must be one of: ${opsHoldReasons.join(", ")}`);
      const note = field(req, "note");
      return deps.actions.hold({
        orderId,
        reason: reason.data,
        ...(note ? { note } : {}),
        by: "ops-console",
      });
    }),
  );
  router.post("/ops/orders/:id/release-hold", (req, res) =>
    act(req, res, "Hold released.", (orderId) => deps.actions.releaseHold({ orderId, by: "ops-console" })),
  );
  router.post("/ops/orders/:id/shipments/:shipmentId/reship", (req, res) =>
    act(req, res, "Parcel re-shipped.", (orderId) => {
      const shipmentId = String(req.params.shipmentId);
      if (!uuid.safeParse(shipmentId).success)
        throw new AppError("shipment_not_found", `Order ${orderId} has no shipment ${shipmentId}`);
      return deps.actions.reship({ orderId, shipmentId, by: "ops-console" });
    }),
  );
  router.post("/ops/orders/:id/emails/:emailId/resend", (req, res) =>
    act(req, res, "E-mail re-sent.", (orderId) => {
      const emailId = String(req.params.emailId);
      if (!uuid.safeParse(emailId).success) throw new AppError("not_found", `No e-mail ${emailId}`);
      return deps.actions.resendEmail({ orderId, emailId, by: "ops-console" });
    }),
  );
  return router;
}
