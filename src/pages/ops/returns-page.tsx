import { Router, type Request, type Response } from "express";
import { z } from "zod";
import { AppError, isAppError } from "../../errors";
import { formatMoney, orderReference } from "../../notifications/templates";
import type { OrderDetails } from "../../orders/order-details";
import { returnConditions, returnReasons } from "../../returns/return-policy";
import type { ReturnActions, ReturnView } from "../../returns/returns";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout, sendNotFound } from "./layout";

const uuid = z.uuid();
const decisions = ["approve", "reject", "receive", "close"] as const;
type Decision = (typeof decisions)[number];

const reasonLabels: Record<(typeof returnReasons)[number], string> = {
  damaged: "Arrived damaged",
  wrong_item: "Wrong item",
  not_as_described: "Not as described",
  no_longer_needed: "No longer needed",
  other: "Other",
};

/** Which decisions a return in this state can take (the use cases refuse the others anyway). */
function decisionsFor(view: ReturnView): Decision[] {
  if (view.status === "requested") return ["approve", "receive", "reject", "close"];
  if (view.status === "approved") return ["receive", "reject", "close"];
  if (view.status === "received" && !view.refundedAt) return ["reject"];
  return [];
}

function ReturnsPage(props: {
  csrf: string;
  order: OrderDetails;
  returns: ReturnView[];
  notice?: { text: string; bad?: boolean };
}) {
  const { order, csrf } = props;
  const money = (amount: number) => formatMoney(amount, order.currency);
  return (
    <OpsLayout title={`Returns of ${orderReference(order.id)}`} csrf={csrf}>
      <h1>
        Returns of order <a href={`/ops/orders/${order.id}`}>{orderReference(order.id)}</a>
      </h1>
      {props.notice ? <p class={`notice ${props.notice.bad ? "bad" : ""}`}>{props.notice.text}</p> : null}
      <section class="card" id="returns">
        <h2>Returns</h2>
        {props.returns.length === 0 ? <p class="muted">No returns.</p> : null}
        {props.returns.map((view) => (
          <div class="return" data-return-id={view.returnId} data-status={view.status}>
            <p>
              <strong>{view.status}</strong> ·{" "}
              {reasonLabels[view.reason as keyof typeof reasonLabels] ?? view.reason} · asked by{" "}
              {view.requestedBy}
              {view.note ? ` · “${view.note}”` : ""}
            </p>
            <ul>
              {view.lines.map((line) => (
                <li>
                  {line.quantity} × {line.sku} ({money(line.unitPrice * line.quantity)})
                  {line.exchangeSku ? ` → ${line.exchangeSku}` : ""}
                </li>
              ))}
            </ul>
            <p class="small">
              {view.label ? (
                <>
                  Label {view.label.carrier} <code>{view.label.trackingNumber}</code> (
                  {view.label.trackerStatus ?? "not scanned"})
                  {view.label.refundStatus ? `, handed back: ${view.label.refundStatus}` : ""}
                  {view.label.sentAt ? `, e-mailed ${formatTime(view.label.sentAt)}` : ""}.{" "}
                </>
              ) : (
                "No label yet. "
              )}
              {view.receivedAt ? `Received ${formatTime(view.receivedAt)} (${view.condition}). ` : ""}
              {view.refundAmount !== null ? `Refunded ${money(view.refundAmount)}. ` : ""}
              {view.restockedAt ? "Restocked. " : ""}
              {view.writtenOffAt ? "Written off. " : ""}
              {view.exchange
                ? view.exchange.trackingNumber
                  ? `Exchange shipped: ${view.exchange.trackingNumber}. `
                  : "Exchange not shipped yet. "
                : ""}
            </p>
            {decisionsFor(view).map((decision) => (
              <form method="post" action={`/ops/returns/${view.returnId}/${decision}`} class="inline">
                <input type="hidden" name="_csrf" value={csrf} />
                {decision === "receive" ? (
                  <select name="condition" aria-label="Condition">
                    {returnConditions.map((condition) => (
                      <option value={condition}>{condition}</option>
                    ))}
                  </select>
                ) : null}
                {decision === "reject" || decision === "close" ? (
                  <input name="note" maxLength={500} placeholder="Note" aria-label={`${decision} note`} />
                ) : null}
                <button class={decision === "reject" ? "danger" : "secondary"} type="submit">
                  {decision === "approve"
                    ? "Approve"
                    : decision === "receive"
                      ? "Mark received"
                      : decision === "reject"
                        ? "Reject"
                        : "Close"}
                </button>{" "}
              </form>
            ))}
          </div>
        ))}
      </section>
      <section class="card">
        <h2>New return</h2>
        <form method="post" action={`/ops/orders/${order.id}/returns`} id="new-return">
          <input type="hidden" name="_csrf" value={csrf} />
          <table>
            <tbody>
              {order.lines.map((line) => (
                <tr>
                  <td>{line.sku}</td>
                  <td>
                    <label>
                      Quantity{" "}
                      <input
                        name={`qty_${line.sku}`}
                        inputMode="numeric"
                        pattern="[0-9]*"
                        size={4}
                        value="0"
                      />
                    </label>{" "}
                    of {line.quantity}
                  </td>
                  <td>
                    <label>
                      Exchange for (sku, empty: refund){" "}
                      <input name={`exchange_${line.sku}`} maxLength={100} size={12} />
                    </label>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>
            <label>
              Reason{" "}
              <select name="reason">
                {returnReasons.map((reason) => (
                  <option value={reason}>{reasonLabels[reason]}</option>
                ))}
              </select>
            </label>{" "}
            <label>
              Note <input name="note" maxLength={500} size={40} />
            </label>
          </p>
          <p>
            <button type="submit">Create return</button>
          </p>
        </form>
      </section>
    </OpsLayout>
  );
}

const field = (req: Request, name: string): string | undefined => {
  const value = (req.body as Record<string, unknown>)[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim().slice(0, 500) : undefined;
};

/** The quantities of a return form (`qty_<sku>` fields), the lines with more than none. */
export function linesFromForm(
  body: Record<string, unknown>,
  skus: readonly string[],
): { sku: string; quantity: number; exchangeSku?: string }[] {
  return skus.flatMap((sku) => {
    const raw = body[`qty_${sku}`];
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "" || text === "0") return [];
    if (!/^\d{1,5}$/.test(text)) {
      throw new AppError("validation_failed", `The quantity of ${sku} must be a whole number`);
    }
    const exchange = body[`exchange_${sku}`];
    const exchangeSku = typeof exchange === "string" ? exchange.trim().slice(0, 100) : "";
    return [{ sku, quantity: Number(text), ...(exchangeSku ? { exchangeSku } : {}) }];
  });
}

function OpenReturnsPage(props: { csrf: string; returns: ReturnView[] }) {
  return (
    <OpsLayout title="Open returns" csrf={props.csrf}>
      <h1>Open returns</h1>
      <section class="card" id="open-returns">
        {props.returns.length === 0 ? <p class="muted">No return waits for anything.</p> : null}
        <table>
          <thead>
            <tr>
              <th>Order</th>
              <th>Status</th>
              <th>Lines</th>
              <th>Label</th>
              <th>Asked</th>
            </tr>
          </thead>
          <tbody>
            {props.returns.map((view) => (
              <tr data-return-id={view.returnId}>
                <td>
                  <a href={`/ops/orders/${view.orderId}/returns`}>{orderReference(view.orderId)}</a>
                </td>
                <td>{view.status}</td>
                <td>{view.lines.map((line) => `${line.quantity} × ${line.sku}`).join(", ")}</td>
                <td>
                  {view.label
                    ? `${view.label.trackingNumber} (${view.label.trackerStatus ?? "not scanned"})`
                    : "none"}
                </td>
                <td>{view.requestedBy}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </OpsLayout>
  );
}

/**
 * The console's returns of an order (/ops/orders/:id/returns): each return with the decisions it
 * can take, and a form for a new one; every post calls the same use case as the admin API.
 */
export function returnsPage(deps: OpsConsoleDeps, returns: ReturnActions): Router {
  const router = Router();

  async function show(
    req: Request,
    res: Response,
    orderId: string,
    notice?: { text: string; bad?: boolean },
    status = 200,
  ) {
    const order = uuid.safeParse(orderId).success ? await deps.queries.details(orderId) : null;
    if (!order) return sendNotFound(deps, req, res, `Order ${orderId} does not exist`);
    const done = typeof req.query.done === "string" ? req.query.done.slice(0, 200) : undefined;
    const shown = notice ?? (done ? { text: done } : undefined);
    sendPage(
      res,
      <ReturnsPage
        csrf={csrfOf(deps, req)}
        order={order}
        returns={await returns.list(orderId)}
        {...(shown ? { notice: shown } : {})}
      />,
      status,
    );
  }

  const refused = (error: unknown): error is AppError => isAppError(error) && error.httpStatus < 500;

  router.get("/ops/orders/:id/returns", (req, res) => show(req, res, String(req.params.id)));

  router.get("/ops/returns", async (req, res) => {
    sendPage(res, <OpenReturnsPage csrf={csrfOf(deps, req)} returns={await returns.listOpen(100)} />);
  });

  router.post("/ops/orders/:id/returns", async (req, res) => {
    const orderId = String(req.params.id);
    const order = uuid.safeParse(orderId).success ? await deps.queries.details(orderId) : null;
    if (!order) return sendNotFound(deps, req, res, `Order ${orderId} does not exist`);
    try {
      const reason = z.enum(returnReasons).safeParse(field(req, "reason"));
      if (!reason.success)
        throw new AppError("validation_failed", `The reason must be one of: ${returnReasons.join(", ")}`);
      const lines = linesFromForm(
        req.body as Record<string, unknown>,
        order.lines.map((line) => line.sku),
      );
      await returns.request({
        orderId,
        lines,
        reason: reason.data,
        note: field(req, "note"),
        by: "ops-console",
      });
    } catch (error) {
      if (!refused(error)) throw error;
      return show(req, res, orderId, { text: error.message, bad: true }, error.httpStatus);
    }
    res.redirect(303, `/ops/orders/${orderId}/returns?done=${encodeURIComponent("Return created.")}`);
  });

  router.post("/ops/returns/:id/:decision", async (req, res) => {
    const returnId = String(req.params.id);
    const decision = String(req.params.decision);
    if (!uuid.safeParse(returnId).success || !(decisions as readonly string[]).includes(decision)) {
      return sendNotFound(deps, req, res, `No return ${returnId}`);
    }
    let view: ReturnView;
    try {
      view = await returns.get(returnId);
    } catch (error) {
      if (!refused(error)) throw error;
      return sendNotFound(deps, req, res, error.message);
    }
    try {
      const note = field(req, "note");
      const by = "ops-console" as const;
      if (decision === "receive") {
        const condition = z.enum(returnConditions).safeParse(field(req, "condition") ?? "resellable");
        if (!condition.success)
          throw new AppError("validation_failed", "The condition must be resellable or damaged");
        await returns.receive({ returnId, condition: condition.data, note, by });
      } else {
        await returns[decision as Exclude<Decision, "receive">]({ returnId, note, by });
      }
    } catch (error) {
      if (!refused(error)) throw error;
      return show(req, res, view.orderId, { text: error.message, bad: true }, error.httpStatus);
    }
    const done: Record<string, string> = {
      approve: "Return approved.",
      reject: "Return rejected.",
      receive: "Return received.",
      close: "Return closed.",
    };
    res.redirect(
      303,
      `/ops/orders/${view.orderId}/returns?done=${encodeURIComponent(done[decision] ?? "Done.")}`,
    );
  });

  return router;
}
