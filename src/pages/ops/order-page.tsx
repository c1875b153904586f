import { holdReasonLabels, type HoldReason } from "../../orders/hold-order";
import { Router, type Request, type Response } from "express";
import { z } from "zod";
import {
  formatMoney,
  lineMoneyOf,
  lineMoneyText,
  moneyRows,
  moneySummaryOf,
  orderReference,
} from "../../notifications/templates";
import type { OrderDetails } from "../../orders/order-details";
import { decide, factsOfDetails, type OrderAction } from "../../shared/order-model";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout, sendNotFound, statusTone } from "./layout";
import type { RunSource, RunSummary } from "./runs";
import { Runs } from "./runs-view";

const uuid = z.uuid();

/** A step-failed entry's detail, as src/orders/run-failures.ts writes it. */
function failedStep(detail: unknown): { step: string; attempts: number | null; error: string } {
  const fields = typeof detail === "object" && detail !== null ? (detail as Record<string, unknown>) : {};
  return {
    step: String(fields.step ?? ""),
    attempts: typeof fields.attempts === "number" ? fields.attempts : null,
    error: String(fields.error ?? ""),
  };
}

/** The order actions the console offers, in the order shown; each asks the order model. */
const consoleActions: readonly { action: OrderAction; label: string }[] = [
  { action: "cancel", label: "Cancel" },
  { action: "refund", label: "Refund" },
  { action: "redrive", label: "Re-drive" },
  { action: "hold", label: "Hold" },
  { action: "release", label: "Release hold" },
];

/** Paid by an authorisation not captured yet: no payment row until the run captures. */
const authorisedStatuses: readonly string[] = ["authorized", "fulfilling"];

function OrderPage(props: {
  csrf: string;
  order: OrderDetails;
  runs: RunSummary[];
  runSource?: RunSource;
  runFailure?: string;
  notice?: { text: string; bad?: boolean };
}) {
  const { order } = props;
  const money = (amount: number) => formatMoney(amount, order.currency);
  // Each line's discount share and tax, from the recorded breakdown (never recomputed; decision 0204).
  const lineMoney = lineMoneyOf(order.money);
  // The current run's failures only: a re-drive hands the order to a new run.
  const lastRedrive = order.timeline.map((entry) => entry.kind).lastIndexOf("redriven");
  const failures = order.timeline.filter(
    (entry, index) => entry.kind === "step-failed" && index > lastRedrive,
  );
  // What ops may do now, from the order model (decision 0170); the rest is listed with why not.
  const facts = factsOfDetails(order);
  const verdicts = consoleActions
    .filter(({ action }) => action !== "release" || order.hold !== null)
    .map((entry) => ({ ...entry, verdict: decide(entry.action, facts) }));
  const offered = verdicts.filter(({ verdict }) => verdict.allowed);
  const withheld = verdicts.flatMap(({ action, label, verdict }) =>
    verdict.allowed ? [] : [{ action, label, why: verdict.why }],
  );
  const reshippable = decide("reship", facts).allowed;
  return (
    <OpsLayout title={`Order ${orderReference(order.id)}`} csrf={props.csrf}>
      <h1>
        Order {orderReference(order.id)}{" "}
        <span class={`badge ${statusTone(order.status)}`}>{order.status}</span>
      </h1>
      {props.notice ? <p class={`notice ${props.notice.bad ? "bad" : ""}`}>{props.notice.text}</p> : null}
      <div class="card">
        <p class="small">
          <code>{order.id}</code> · {order.email} · customer {order.customerId} · created{" "}
          {formatTime(order.createdAt)}
        </p>
        {order.attentionReason ? <p class="error">Needs attention: {order.attentionReason}</p> : null}
        {order.hold ? (
          <p class="hold">
            On hold: <strong>{holdReasonLabels[order.hold.reason as HoldReason] ?? order.hold.reason}</strong>
            {order.hold.note ? ` (${order.hold.note})` : ""}
            {order.hold.since ? ` since ${formatTime(order.hold.since)}` : ""}
            {order.hold.by ? ` by ${order.hold.by}` : ""}
          </p>
        ) : null}
        <p class="inline">
          {offered.map(({ action, label }) => (
            <span key={action}>
              <a
                class="button secondary"
                data-action={action}
                href={`/ops/orders/${order.id}/confirm/${action === "release" ? "release-hold" : action}`}
              >
                {label}…
              </a>{" "}
            </span>
          ))}
          <a class="button secondary" href={`/ops/orders/${order.id}/returns`}>
            Returns…
          </a>
        </p>
        {withheld.length > 0 ? (
          <ul class="small muted not-offered">
            {withheld.map(({ action, label, why }) => (
              <li key={action} data-not-offered={action}>
                {label}: not now, {why}.
              </li>
            ))}
          </ul>
        ) : null}
      </div>
      <div class="card">
        <h2>Items</h2>
        <table>
          <tbody>
            {order.lines.map((line) => (
              <tr key={line.sku}>
                <td>
                  {line.quantity} × {line.name} <span class="muted small">{line.sku}</span>
                  {line.shortQuantity > 0 ? (
                    <>
                      {" "}
                      <span class="badge warn" data-short={line.sku}>
                        {line.shortQuantity} short: not shipped, not charged
                      </span>
                    </>
                  ) : null}
                  {lineMoney.get(line.sku) ? (
                    <div class="muted small" data-line-money={line.sku}>
                      {lineMoneyText(lineMoney.get(line.sku), order.currency)}
                    </div>
                  ) : null}
                </td>
                <td class="num">{money(line.unitPrice * line.quantity)}</td>
              </tr>
            ))}
            {moneyRows({ ...order, orderId: order.id, money: moneySummaryOf(order.money) }).map(
              ([label, amount]) => (
                <tr key={label} data-money={label}>
                  <td>{label}</td>
                  <td class="num">{amount}</td>
                </tr>
              ),
            )}
            <tr>
              <td>
                <strong>Total</strong>
              </td>
              <td class="num">
                <strong>{money(order.total)}</strong>
              </td>
            </tr>
          </tbody>
        </table>
      </div>
      <div class="card">
        <h2>Payment</h2>
        <p class="small">
          Checkout Session <code>{order.checkoutSessionId ?? "—"}</code> · PaymentIntent{" "}
          <code>{order.paymentIntentId ?? "—"}</code>
        </p>
        {order.payment ? (
          <p>
            <span class="badge">{order.payment.status}</span> authorised{" "}
            {money(order.payment.amountAuthorized)} · captured {money(order.payment.amountCaptured)} ·
            refunded {money(order.payment.amountRefunded)}
          </p>
        ) : order.paymentIntentId && authorisedStatuses.includes(order.status) ? (
          <p data-payment="authorised">
            <span class="badge">authorised</span> card authorised for {money(order.total)} · nothing captured
            yet (a cancel releases the authorisation; there is nothing to refund)
          </p>
        ) : (
          <p class="muted">No payment recorded.</p>
        )}
        {order.payment && order.payment.disputes.length > 0 ? (
          <>
            <h3>Disputes</h3>
            <p class="small">
              withdrawn {money(order.payment.amountDisputeWithdrawn)} · reinstated{" "}
              {money(order.payment.amountDisputeReinstated)}
            </p>
            <table class="disputes">
              <thead>
                <tr>
                  <th>Dispute</th>
                  <th>Status</th>
                  <th>Amount</th>
                  <th>Reason</th>
                  <th>Evidence due</th>
                  <th>Withdrawn</th>
                  <th>Reinstated</th>
                </tr>
              </thead>
              <tbody>
                {order.payment.disputes.map((dispute) => (
                  <tr>
                    <td>
                      <code>{dispute.providerId}</code>
                    </td>
                    <td>
                      <span class={`badge dispute-${dispute.status}`}>{dispute.status}</span>
                    </td>
                    <td>{money(dispute.amount)}</td>
                    <td>{dispute.reason}</td>
                    <td>{dispute.evidenceDueBy ? formatTime(dispute.evidenceDueBy) : "—"}</td>
                    <td>{money(dispute.amountWithdrawn)}</td>
                    <td>{money(dispute.amountReinstated)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : null}
      </div>
      <div class="card">
        <h2>Shipment</h2>
        {order.shipments.length === 0 ? <p class="muted">Not shipped.</p> : null}
        {order.shipments.map((shipment) => (
          <p
            data-parcel={shipment.parcelNumber}
            data-shipment={shipment.id}
            class={shipment.supersededAt ? "muted superseded" : "parcel"}
          >
            {order.shipments.length > 1 ? <strong>Parcel {shipment.parcelNumber} </strong> : null}
            {shipment.generation > 0 ? `(re-ship ${shipment.generation}) ` : ""}
            {shipment.carrier} <code>{shipment.trackingNumber}</code> · {shipment.status}
            {shipment.labelCost !== null ? (
              <span class="label-cost" data-label-cost={shipment.labelCost}>
                {" "}
                · label {formatMoney(shipment.labelCost, shipment.labelCurrency ?? order.currency)}
              </span>
            ) : null}
            {shipment.deliveredAt ? ` · delivered ${formatTime(shipment.deliveredAt)}` : ""} ·{" "}
            <a href={shipment.trackingUrl}>tracking page</a>
            {shipment.trackerStatus ? ` · carrier: ${shipment.trackerStatus}` : ""}
            {shipment.lines.length > 0
              ? ` · ${shipment.lines.map((line) => `${line.quantity}× ${line.sku}`).join(", ")}`
              : ""}
            {shipment.supersededAt ? ` · replaced ${formatTime(shipment.supersededAt)}` : ""}
            {shipment.labelRefundStatus ? (
              <span class="label-refund">
                {" "}
                · label refund{" "}
                <strong>
                  {/* EasyPost's word for a carrier billed on scan: nothing was charged to refund. */}
                  {shipment.labelRefundStatus === "not_applicable"
                    ? "not applicable (billed on scan)"
                    : shipment.labelRefundStatus}
                </strong>
                {shipment.labelRefundRequestedAt
                  ? ` (asked ${formatTime(shipment.labelRefundRequestedAt)})`
                  : ""}
              </span>
            ) : null}
            {reshippable && !shipment.supersededAt && shipment.status === "booked" ? (
              <>
                {" "}
                <a
                  class="button secondary small"
                  href={`/ops/orders/${order.id}/confirm/reship?shipment=${shipment.id}`}
                >
                  Re-ship…
                </a>
              </>
            ) : null}
          </p>
        ))}
        <LabelsVsQuote order={order} />
      </div>
      <div class="card">
        <h2>E-mails</h2>
        {order.emails.length === 0 ? <p class="muted">None sent.</p> : null}
        <table class="small">
          <tbody>
            {order.emails.map((email) => (
              <tr key={email.id} data-email={email.idempotencyKey}>
                <td>
                  <a href={`/ops/orders/${order.id}/emails/${email.id}`}>{email.template}</a>
                  <div class="muted">{email.idempotencyKey}</div>
                </td>
                <td>
                  <span
                    class={`badge ${email.status === "sent" ? "ok" : email.status === "failed" ? "bad" : ""}`}
                  >
                    {email.status}
                  </span>
                </td>
                <td class="hide">{formatTime(email.sentAt)}</td>
                <td>
                  <a href={`/ops/orders/${order.id}/confirm/resend?email=${email.id}`}>Re-send…</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="card">
        <h2>Inngest runs</h2>
        {failures.map((entry, index) => {
          const failure = failedStep(entry.detail);
          return (
            <p key={index} class="notice bad small" data-failed-step={failure.step}>
              Step <strong>{failure.step}</strong> failed for good after {String(failure.attempts ?? "?")}{" "}
              attempt(s): {failure.error}
            </p>
          );
        })}
        <Runs
          runs={props.runs}
          source={props.runSource}
          failure={props.runFailure}
          attempts={
            new Map(
              failures.map((entry) => {
                const failure = failedStep(entry.detail);
                return [`${entry.runId} ${failure.step}`, failure.attempts ?? 0] as const;
              }),
            )
          }
        />
      </div>
      <div class="card">
        <h2>Timeline</h2>
        <ul class="steps small">
          {order.timeline.map((entry, index) => (
            <li key={index} data-kind={entry.kind}>
              <span class="muted">{formatTime(entry.at)}</span> · <strong>{entry.kind}</strong>{" "}
              <code>{JSON.stringify(entry.detail)}</code>
            </li>
          ))}
        </ul>
      </div>
    </OpsLayout>
  );
}

/** The order `:id` names, or undefined after answering 404. */
export async function orderOr404(
  deps: OpsConsoleDeps,
  req: Request,
  res: Response,
): Promise<OrderDetails | undefined> {
  const id = String(req.params.id);
  const order = uuid.safeParse(id).success ? await deps.queries.details(id) : null;
  if (!order) {
    sendNotFound(deps, req, res, `No order ${id}.`);
    return undefined;
  }
  return order;
}

async function runsOf(
  deps: OpsConsoleDeps,
  order: OrderDetails,
): Promise<{ runs: RunSummary[]; failure?: string }> {
  const source = deps.runs;
  if (!source) return { runs: [] };
  const runIds = [...new Set(order.timeline.map((entry) => entry.runId).filter((id): id is string => !!id))];
  try {
    const runs = await Promise.all(runIds.map((runId) => source.run(runId)));
    return { runs: runs.filter((run): run is RunSummary => run !== undefined) };
  } catch (error) {
    deps.logger.warn({ err: error, orderId: order.id }, "ops console: could not read the order's runs");
    return { runs: [], failure: `Could not read runs from ${source.label}.` };
  }
}

/** The order's page, with a notice (what an action did, or why not). */
export async function showOrder(
  deps: OpsConsoleDeps,
  req: Request,
  res: Response,
  notice?: { text: string; bad?: boolean },
  status = 200,
): Promise<void> {
  const order = await orderOr404(deps, req, res);
  if (!order) return;
  const { runs, failure } = await runsOf(deps, order);
  sendPage(
    res,
    <OrderPage
      csrf={csrfOf(deps, req)}
      order={order}
      runs={runs}
      {...(deps.runs ? { runSource: deps.runs } : {})}
      {...(failure ? { runFailure: failure } : {})}
      {...(notice ? { notice } : {})}
    />,
    status,
  );
}

/** GET /ops/orders/:id: everything about one order, its runs step by step, and its actions. */
export function orderPage(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.get("/ops/orders/:id", async (req, res) => {
    const done = typeof req.query.done === "string" ? req.query.done : undefined;
    // An action refused (POST, then 303 here): its reason, shown as text.
    const refused = typeof req.query.refused === "string" ? req.query.refused.slice(0, 500) : undefined;
    await showOrder(
      deps,
      req,
      res,
      refused ? { text: `Refused: ${refused}`, bad: true } : done ? { text: done } : undefined,
    );
  });
  return router;
}

/**
 * What the order's labels cost (every label, re-ships included, from the shipments' label_cost)
 * beside what the customer paid for shipping (before its tax): decision 0203. Shown for an order
 * that recorded its money and whose labels' costs are known, in the order's currency.
 */
function LabelsVsQuote(props: { order: OrderDetails }) {
  const { order } = props;
  const costs = order.shipments.filter((shipment) => shipment.labelCost !== null);
  if (!order.money || costs.length === 0) return null;
  if (costs.some((shipment) => (shipment.labelCurrency ?? order.currency) !== order.currency)) return null;
  const labelCost = costs.reduce((sum, shipment) => sum + (shipment.labelCost ?? 0), 0);
  const paid = order.money.shipping;
  const option = order.money.shippingRate?.displayName;
  const money = (amount: number) => formatMoney(amount, order.currency);
  return (
    <p class="label-vs-quote" data-label-cost-total={labelCost} data-shipping-paid={paid}>
      Labels cost <strong>{money(labelCost)}</strong>
      {costs.length > 1 ? ` (${costs.length} labels)` : ""}; the customer paid <strong>{money(paid)}</strong>{" "}
      for shipping{option ? ` (${option})` : ""}: difference{" "}
      <strong>{paid - labelCost < 0 ? `−${money(labelCost - paid)}` : money(paid - labelCost)}</strong>
    </p>
  );
}
