import { Router, type Request, type Response } from "express";
import { isAppError } from "../../errors";
import { formatMoney, orderReference } from "../../notifications/templates";
import type { ReconciliationReport, ReconciliationSummary } from "../../reconciliation";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout, sendNotFound } from "./layout";

const show = (value: unknown): string =>
  value === null || value === undefined ? "—" : JSON.stringify(value);

function Totals(props: { report: ReconciliationSummary }) {
  const currencies = Object.entries(props.report.totals);
  if (currencies.length === 0) return <p class="muted">No money moved at Stripe this day.</p>;
  return (
    <table>
      <caption>Stripe beside our records</caption>
      <thead>
        <tr>
          <th>Currency</th>
          <th>Charges</th>
          <th>Refunds</th>
          <th>Disputes</th>
          <th>Fees</th>
          <th>Net</th>
          <th>We captured</th>
          <th>We refunded</th>
        </tr>
      </thead>
      <tbody>
        {currencies.map(([currency, totals]) => (
          <tr key={currency} data-currency={currency}>
            <td>{currency.toUpperCase()}</td>
            <td>{formatMoney(totals.stripe.charges, currency)}</td>
            <td>{formatMoney(totals.stripe.refunds, currency)}</td>
            <td>{formatMoney(totals.stripe.disputes, currency)}</td>
            <td data-field="fees">{formatMoney(totals.stripe.fees, currency)}</td>
            <td data-field="net">{formatMoney(totals.stripe.net, currency)}</td>
            <td>{formatMoney(totals.ours.captured, currency)}</td>
            <td>{formatMoney(totals.ours.refunded, currency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ReportPage(props: { csrf: string; report: ReconciliationReport }) {
  const { report } = props;
  return (
    <OpsLayout title={`Reconciliation ${report.date}`} csrf={props.csrf}>
      <h1>Reconciliation of {report.date}</h1>
      <div class="card">
        <p>
          <span id="mismatch-count" data-count={report.mismatchCount}>
            {report.mismatchCount === 0 ? "0 mismatches" : `${report.mismatchCount} mismatches`}
          </span>{" "}
          · {report.stripeTransactions} Stripe balance transactions · {report.carrierShipments} carrier labels
          · day in {report.timeZone}
        </p>
        <p class="small muted">
          Run by {report.ranBy}, {formatTime(new Date(report.startedAt))} –{" "}
          {formatTime(new Date(report.finishedAt))} · report <code>{report.id}</code>
        </p>
        <form method="post" action="/ops/reconciliation" class="inline">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <input type="hidden" name="date" value={report.date} />
          <button class="secondary" type="submit">
            Run this day again
          </button>
        </form>
      </div>
      <div class="card">
        <Totals report={report} />
      </div>
      {report.mismatches.length > 0 ? (
        <div class="card">
          <table id="mismatches">
            <caption>Mismatches</caption>
            <thead>
              <tr>
                <th>Kind</th>
                <th>Order</th>
                <th>Reference</th>
                <th>Ours</th>
                <th>Theirs</th>
                <th>What</th>
              </tr>
            </thead>
            <tbody>
              {report.mismatches.map((mismatch, index) => (
                <tr key={index} data-kind={mismatch.kind} data-reference={mismatch.reference}>
                  <td>{mismatch.kind}</td>
                  <td>
                    {mismatch.orderId ? (
                      <a href={`/ops/orders/${mismatch.orderId}`}>{orderReference(mismatch.orderId)}</a>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td>
                    {mismatch.link && !mismatch.orderId ? (
                      <a href={mismatch.link}>{mismatch.reference}</a>
                    ) : (
                      <code>{mismatch.reference}</code>
                    )}
                  </td>
                  <td data-field="ours">
                    <code>{show(mismatch.ours)}</code>
                  </td>
                  <td data-field="theirs">
                    <code>{show(mismatch.theirs)}</code>
                  </td>
                  <td>{mismatch.detail}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>
            <a href="/ops?attention=reconciliation">The orders involved, in Needs attention</a>
          </p>
        </div>
      ) : null}
    </OpsLayout>
  );
}

function RunsPage(props: { csrf: string; runs: ReconciliationSummary[]; timeZone: string; error?: string }) {
  return (
    <OpsLayout title="Reconciliation" csrf={props.csrf}>
      <h1>Reconciliation</h1>
      <form class="card inline" method="post" action="/ops/reconciliation">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <label>
          Day ({props.timeZone}) <input type="date" name="date" required />
        </label>
        <button type="submit">Reconcile</button>
      </form>
      {props.error ? <p class="notice bad">{props.error}</p> : null}
      <div class="card">
        {props.runs.length === 0 ? (
          <p class="muted">No day reconciled yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Day</th>
                <th>Mismatches</th>
                <th>Run by</th>
                <th>Finished</th>
              </tr>
            </thead>
            <tbody>
              {props.runs.map((run) => (
                <tr key={run.id}>
                  <td>
                    <a href={`/ops/reconciliation/${run.id}`}>{run.date}</a>
                  </td>
                  <td class={run.mismatchCount > 0 ? "error" : ""}>{run.mismatchCount}</td>
                  <td>{run.ranBy}</td>
                  <td>{formatTime(new Date(run.finishedAt))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </OpsLayout>
  );
}

/** /ops/reconciliation: the daily reports, one per day, and running a day again. */
export function reconciliationPage(deps: OpsConsoleDeps): Router {
  const router = Router();
  const { reconciliation } = deps;
  if (!reconciliation) return router;

  const listPage = async (req: Request, res: Response, error?: string, status = 200) => {
    const runs = await reconciliation.list({});
    sendPage(
      res,
      <RunsPage
        csrf={csrfOf(deps, req)}
        runs={runs}
        timeZone={reconciliation.timeZone}
        {...(error ? { error } : {})}
      />,
      status,
    );
  };

  router.get("/ops/reconciliation", async (req, res) => {
    const date = typeof req.query.date === "string" ? req.query.date : undefined;
    if (date) {
      try {
        const [run] = await reconciliation.list({ date });
        if (run) {
          res.redirect(303, `/ops/reconciliation/${run.id}`);
          return;
        }
        await listPage(req, res, `No report for ${date} yet`, 404);
      } catch (error) {
        if (!isAppError(error)) throw error;
        await listPage(req, res, error.message, 400);
      }
      return;
    }
    await listPage(req, res);
  });

  router.post("/ops/reconciliation", async (req, res) => {
    const date = (req.body as Record<string, unknown>).date;
    try {
      const report = await reconciliation.run({ date, by: "ops-console" });
      res.redirect(303, `/ops/reconciliation/${report.id}`);
    } catch (error) {
      if (!isAppError(error) || error.code !== "validation_failed") throw error;
      await listPage(req, res, error.message, 400);
    }
  });

  router.get("/ops/reconciliation/:id", async (req, res) => {
    try {
      const report = await reconciliation.find(req.params.id);
      sendPage(res, <ReportPage csrf={csrfOf(deps, req)} report={report} />);
    } catch (error) {
      if (!isAppError(error) || error.code !== "not_found") throw error;
      sendNotFound(deps, req, res, error.message);
    }
  });

  return router;
}
