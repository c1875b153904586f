import express, { type Request, type Response, Router } from "express";
import { z } from "zod";
import type { Database } from "../../db/client";
import { AppError, isAppError } from "../../errors";
import { safeEqual } from "../../http/bearer-auth";
import { rateLimit } from "express-rate-limit";
import type { Logger } from "../../logger";
import type { EmailRenderer } from "../../notifications/email-renderer";
import { emailTemplates, formatMoney, orderReference } from "../../notifications/templates";
import { findOrderDetails, type OrderDetails } from "../../orders/order-details";
import {
  attentionFilters,
  parseOrderSearch,
  searchOrders,
  type OrderListItem,
} from "../../orders/order-search";
import { OrderStatus } from "../../generated/prisma/enums";
import { Layout, formatTime, sendPage } from "../layout";
import type { RunSource, RunSummary } from "./runs";
import type { OpsSessions } from "./session";

/** What the console can do to an order; each is the same function the admin API calls. */
export interface OpsActions {
  cancel(orderId: string, reason: string | undefined): Promise<unknown>;
  resendEmail(orderId: string, emailId: string): Promise<unknown>;
  /** What POST /api/orders/:id/refund does; the button is shown only when wired. */
  refund?(orderId: string, amount: number | undefined, reason: string | undefined): Promise<unknown>;
  /** What POST /api/orders/:id/redrive does; the button is shown only when wired. */
  redrive?(orderId: string): Promise<unknown>;
}

export interface OpsConsoleDeps {
  db: Database;
  adminToken: string;
  sessions: OpsSessions;
  actions: OpsActions;
  renderer: EmailRenderer;
  runs?: RunSource;
  logger: Logger;
  /** Login attempts per client per minute. */
  loginRateLimit?: number;
}

const uuid = z.uuid();
const attentionLabels: Record<(typeof attentionFilters)[number], string> = {
  any: "Needs attention (any)",
  failed: "Failed run",
  payment_failed: "Payment failed",
  stock: "Stock problem",
  authorization_expiring: "Authorization expiring",
  stalled: "Stalled",
};
type Action = "cancel" | "refund" | "resend" | "redrive";

function Nav(props: { csrf: string }) {
  return (
    <>
      <a href="/ops">Orders</a>
      <a href="/ops?attention=any">Needs attention</a>
      <form method="post" action="/ops/logout" class="inline">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <button class="secondary" type="submit">
          Log out
        </button>
      </form>
    </>
  );
}

function OpsLayout(props: { title: string; csrf: string; children: preact.ComponentChildren }) {
  return (
    <Layout title={`${props.title} · Ops`} brand="Ops console" nav={<Nav csrf={props.csrf} />}>
      {props.children}
    </Layout>
  );
}

function statusTone(status: string): string {
  if (["payment_failed", "cancelled_out_of_stock", "expired"].includes(status)) return "bad";
  if (["cancelled"].includes(status)) return "warn";
  if (["shipped", "delivered", "completed"].includes(status)) return "ok";
  return "";
}

function OrdersPage(props: {
  csrf: string;
  query: Record<string, string>;
  orders: OrderListItem[];
  nextCursor: string | null;
  error?: string;
}) {
  const { query } = props;
  const next = props.nextCursor
    ? `/ops?${new URLSearchParams({ ...query, cursor: props.nextCursor }).toString()}`
    : null;
  return (
    <OpsLayout title="Orders" csrf={props.csrf}>
      <h1>Orders</h1>
      <form class="card inline" method="get" action="/ops">
        <select name="status" aria-label="Status">
          <option value="">Any status</option>
          {Object.values(OrderStatus).map((status) => (
            <option key={status} value={status} selected={query.status === status}>
              {status}
            </option>
          ))}
        </select>
        <select name="attention" aria-label="Needs attention">
          <option value="">All orders</option>
          {attentionFilters.map((filter) => (
            <option key={filter} value={filter} selected={query.attention === filter}>
              {attentionLabels[filter]}
            </option>
          ))}
        </select>
        <input
          type="search"
          name="q"
          value={query.q ?? ""}
          placeholder="Order id, e-mail, cs_…, pi_…"
          size={30}
        />
        <button type="submit">Filter</button>
      </form>
      {props.error ? <p class="notice bad">{props.error}</p> : null}
      <div class="card">
        <table>
          <thead>
            <tr>
              <th>Order</th>
              <th>Status</th>
              <th class="hide">Customer</th>
              <th class="num">Total</th>
              <th class="hide">Created</th>
            </tr>
          </thead>
          <tbody>
            {props.orders.map((order) => (
              <tr key={order.id}>
                <td>
                  <a href={`/ops/orders/${order.id}`}>{orderReference(order.id)}</a>
                  {order.attentionReason ? <div class="small error">{order.attentionReason}</div> : null}
                </td>
                <td>
                  <span class={`badge ${statusTone(order.status)}`}>{order.status}</span>
                </td>
                <td class="hide">{order.email}</td>
                <td class="num">{formatMoney(order.total, order.currency)}</td>
                <td class="hide small">{formatTime(order.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {props.orders.length === 0 ? <p class="muted">No orders match.</p> : null}
        {next ? (
          <p>
            <a href={next}>Next page →</a>
          </p>
        ) : null}
      </div>
    </OpsLayout>
  );
}

function Runs(props: {
  runs: RunSummary[];
  source?: RunSource;
  failure?: string;
  /** Attempts of failed steps, by run and step, from the timeline's step-failed entries. */
  attempts?: Map<string, number>;
}) {
  if (!props.source) return <p class="muted">No Inngest run source is configured.</p>;
  return (
    <>
      <p class="muted small">From {props.source.label}.</p>
      {props.failure ? <p class="error">{props.failure}</p> : null}
      {props.runs.length === 0 ? <p class="muted">No runs recorded for this order yet.</p> : null}
      {props.runs.map((run) => (
        <div key={run.runId} class="run" data-run-status={run.status}>
          <h3 style="font-size:1rem;margin:.75rem 0 .25rem">
            {run.functionId}{" "}
            <span class={`badge ${run.status === "Failed" ? "bad" : run.status === "Completed" ? "ok" : ""}`}>
              {run.status}
            </span>{" "}
            <a class="small" href={run.dashboardUrl}>
              open run
            </a>
          </h3>
          <p class="small muted">
            Run <code>{run.runId}</code> · started {formatTime(run.startedAt)} · ended{" "}
            {formatTime(run.endedAt)}
          </p>
          {run.error ? <p class="error small">Run error: {run.error}</p> : null}
          <table class="small">
            <thead>
              <tr>
                <th>Step</th>
                <th>Status</th>
                <th>Attempts</th>
                <th class="hide">Finished</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {run.steps.map((step) => (
                <tr key={step.id} data-step={step.name} data-step-status={step.status}>
                  <td>{step.name}</td>
                  <td>
                    <span class={`badge ${step.status === "Failed" ? "bad" : "ok"}`}>{step.status}</span>
                  </td>
                  <td>{props.attempts?.get(`${run.runId} ${step.name}`) ?? ""}</td>
                  <td class="hide">{formatTime(step.completedAt)}</td>
                  <td class="error">{step.error ?? ""}</td>
                </tr>
              ))}
              {run.pending.map((job) => (
                <tr key={`pending-${job.name}`}>
                  <td>{job.name}</td>
                  <td>
                    <span class="badge warn">
                      {job.kind === "call" && job.attempt > 0 ? "Retrying" : "Waiting"}
                    </span>
                  </td>
                  <td>{job.attempt > 0 ? job.attempt + 1 : ""}</td>
                  <td class="hide">next {formatTime(job.runAt)}</td>
                  <td />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}

function OrderPage(props: {
  csrf: string;
  order: OrderDetails;
  runs: RunSummary[];
  runSource?: RunSource;
  runFailure?: string;
  actions: OpsActions;
  notice?: { text: string; bad?: boolean };
}) {
  const { order } = props;
  const money = (amount: number) => formatMoney(amount, order.currency);
  const failedSteps = order.timeline
    .filter((entry) => entry.kind === "step-failed")
    .map((entry) => (entry.detail ?? {}) as { step?: string; attempts?: number; error?: string });
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
        <p class="inline">
          <a class="button secondary" href={`/ops/orders/${order.id}/confirm/cancel`}>
            Cancel…
          </a>{" "}
          {props.actions.refund ? (
            <a class="button secondary" href={`/ops/orders/${order.id}/confirm/refund`}>
              Refund…
            </a>
          ) : null}{" "}
          {props.actions.redrive ? (
            <a class="button secondary" href={`/ops/orders/${order.id}/confirm/redrive`}>
              Re-drive…
            </a>
          ) : null}
        </p>
      </div>
      <div class="card">
        <h2>Items</h2>
        <table>
          <tbody>
            {order.lines.map((line) => (
              <tr key={line.sku}>
                <td>
                  {line.quantity} × {line.name} <span class="muted small">{line.sku}</span>
                </td>
                <td class="num">{money(line.unitPrice * line.quantity)}</td>
              </tr>
            ))}
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
        ) : (
          <p class="muted">No payment recorded.</p>
        )}
      </div>
      <div class="card">
        <h2>Shipment</h2>
        {order.shipment ? (
          <p>
            {order.shipment.carrier} <code>{order.shipment.trackingNumber}</code> · {order.shipment.status}
            {order.shipment.deliveredAt
              ? ` · delivered ${formatTime(order.shipment.deliveredAt)}`
              : ""} · <a href={order.shipment.trackingUrl}>tracking page</a>
          </p>
        ) : (
          <p class="muted">Not shipped.</p>
        )}
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
        {failedSteps.map((detail, index) => (
          <p key={index} class="notice bad small" data-failed-step={String(detail.step ?? "")}>
            Step <strong>{String(detail.step ?? "")}</strong> failed for good after{" "}
            {String(detail.attempts ?? "?")} attempt(s): {String(detail.error ?? "")}
          </p>
        ))}
        <Runs
          runs={props.runs}
          source={props.runSource}
          failure={props.runFailure}
          attempts={
            new Map(
              order.timeline
                .filter((entry) => entry.kind === "step-failed")
                .map((entry) => {
                  const detail = (entry.detail ?? {}) as { step?: string; attempts?: number };
                  return [`${entry.runId} ${detail.step}`, detail.attempts ?? 0] as const;
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

function ConfirmPage(props: {
  csrf: string;
  order: OrderDetails;
  action: Action;
  emailId?: string;
  template?: string;
}) {
  const { order, action } = props;
  const titles: Record<Action, string> = {
    cancel: "Cancel this order?",
    refund: "Refund this order?",
    resend: `Re-send the ${props.template ?? ""} e-mail?`,
    redrive: "Re-drive this order?",
  };
  const target =
    action === "resend"
      ? `/ops/orders/${order.id}/emails/${props.emailId}/resend`
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
        {action === "refund" ? (
          <p>
            <label>
              Amount in minor units (empty: everything captured and not yet refunded){" "}
              <input name="amount" inputMode="numeric" pattern="[0-9]*" />
            </label>
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

function LoginPage(props: { error?: string; next: string }) {
  return (
    <Layout title="Ops login" brand="Ops console" narrow>
      <h1>Log in</h1>
      <form class="card" method="post" action={`/ops/login?next=${encodeURIComponent(props.next)}`}>
        {props.error ? <p class="error">{props.error}</p> : null}
        <p>
          <label>
            Admin token (ADMIN_API_TOKEN; in development see .data/dev-secrets.json)
            <br />
            <input type="password" name="token" autocomplete="current-password" required size={40} />
          </label>
        </p>
        <button type="submit">Log in</button>
      </form>
    </Layout>
  );
}

const amountField = z.union([
  z.literal("").transform(() => undefined),
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().positive()),
]);

/** Only local paths: the login's `next` must not send anyone elsewhere. */
function localNext(value: unknown): string {
  return typeof value === "string" && /^\/ops(\/|\?|$)/.test(value) ? value : "/ops";
}

export function opsConsole(deps: OpsConsoleDeps): Router {
  const router = Router();
  const { db, sessions } = deps;
  const form = express.urlencoded({ extended: false, limit: "10kb" });
  const csrf = (req: Request) => sessions.csrfToken(req) ?? "";

  router.get("/ops/login", (req, res) => {
    sendPage(res, <LoginPage next={localNext(req.query.next)} />);
  });
  router.post(
    "/ops/login",
    // Only failed logins count (a 401 answer), per client, per replica.
    rateLimit({
      windowMs: 60_000,
      limit: deps.loginRateLimit ?? 5,
      skipSuccessfulRequests: true,
      standardHeaders: "draft-7",
      legacyHeaders: false,
      handler: (req, res) => {
        sendPage(
          res,
          <LoginPage
            error="Too many failed logins from here; wait a minute."
            next={localNext(req.query.next)}
          />,
          429,
        );
      },
    }),
    form,
    (req, res) => {
      const token = (req.body as { token?: unknown }).token;
      if (typeof token !== "string" || !safeEqual(token, deps.adminToken)) {
        deps.logger.warn({ ip: req.ip }, "ops console: failed login");
        sendPage(
          res,
          <LoginPage error="That token is not the admin token." next={localNext(req.query.next)} />,
          401,
        );
        return;
      }
      sessions.login(res);
      res.redirect(303, localNext(req.query.next));
    },
  );

  router.use("/ops", form, sessions.require);

  router.post("/ops/logout", (req, res) => {
    sessions.logout(req, res);
    res.redirect(303, "/ops/login");
  });

  router.get("/ops", async (req, res) => {
    const query = Object.fromEntries(
      Object.entries(req.query).filter(
        (entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "",
      ),
    );
    const { cursor: _cursor, ...filters } = query;
    try {
      const result = await searchOrders(db, parseOrderSearch(query));
      sendPage(
        res,
        <OrdersPage csrf={csrf(req)} query={filters} orders={result.orders} nextCursor={result.nextCursor} />,
      );
    } catch (error) {
      if (!isAppError(error)) throw error;
      sendPage(
        res,
        <OrdersPage csrf={csrf(req)} query={filters} orders={[]} nextCursor={null} error={error.message} />,
        400,
      );
    }
  });

  async function orderOr404(req: Request, res: Response): Promise<OrderDetails | undefined> {
    const id = String(req.params.id);
    const order = uuid.safeParse(id).success ? await findOrderDetails(db, id) : null;
    if (!order) {
      sendPage(
        res,
        <OpsLayout title="Not found" csrf={csrf(req)}>
          <p class="notice bad">No order {id}.</p>
        </OpsLayout>,
        404,
      );
      return undefined;
    }
    return order;
  }

  async function runsOf(order: OrderDetails): Promise<{ runs: RunSummary[]; failure?: string }> {
    const source = deps.runs;
    if (!source) return { runs: [] };
    const runIds = [
      ...new Set(order.timeline.map((entry) => entry.runId).filter((id): id is string => !!id)),
    ];
    try {
      const runs = await Promise.all(runIds.map((runId) => source.run(runId)));
      return { runs: runs.filter((run): run is RunSummary => run !== undefined) };
    } catch (error) {
      deps.logger.warn({ err: error, orderId: order.id }, "ops console: could not read the order's runs");
      return { runs: [], failure: `Could not read runs from ${source.label}.` };
    }
  }

  async function showOrder(
    req: Request,
    res: Response,
    notice?: { text: string; bad?: boolean },
    status = 200,
  ) {
    const order = await orderOr404(req, res);
    if (!order) return;
    const { runs, failure } = await runsOf(order);
    sendPage(
      res,
      <OrderPage
        csrf={csrf(req)}
        order={order}
        runs={runs}
        {...(deps.runs ? { runSource: deps.runs } : {})}
        {...(failure ? { runFailure: failure } : {})}
        actions={deps.actions}
        {...(notice ? { notice } : {})}
      />,
      status,
    );
  }

  router.get("/ops/orders/:id", async (req, res) => {
    const done = typeof req.query.done === "string" ? req.query.done : undefined;
    await showOrder(req, res, done ? { text: done } : undefined);
  });

  router.get("/ops/orders/:id/emails/:emailId", async (req, res) => {
    const order = await orderOr404(req, res);
    if (!order) return;
    const email = order.emails.find((e) => e.id === req.params.emailId);
    if (!email) {
      res.status(404).type("text").send("No such e-mail");
      return;
    }
    sendPage(
      res,
      <OpsLayout title={`E-mail ${email.template}`} csrf={csrf(req)}>
        <h1>
          {email.template} <span class="badge">{email.status}</span>
        </h1>
        <p class="small">
          To {email.recipient} · Message-ID <code>{email.messageId}</code> · sent {formatTime(email.sentAt)} ·{" "}
          <a href={`/ops/orders/${order.id}`}>back to the order</a>
        </p>
        <p class="muted small">Rendered again from the order's record with the template it was sent with.</p>
        <iframe sandbox="" title="E-mail" src={`/ops/orders/${order.id}/emails/${email.id}/html`} />
      </OpsLayout>,
    );
  });

  router.get("/ops/orders/:id/emails/:emailId/html", async (req, res) => {
    const order = await orderOr404(req, res);
    const email = order?.emails.find((e) => e.id === req.params.emailId);
    if (!order) return;
    if (!email || !(email.template in emailTemplates)) {
      res.status(404).type("text").send("No such e-mail");
      return;
    }
    const content = await deps.renderer.render(order.id, email.template as keyof typeof emailTemplates);
    // Shown in a sandboxed iframe; the header sandboxes it when opened directly too.
    res.setHeader(
      "Content-Security-Policy",
      "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    );
    res.type("html").send(content.html);
  });

  router.get("/ops/orders/:id/confirm/:action", async (req, res) => {
    const action = req.params.action as Action;
    const available =
      action === "cancel" ||
      action === "resend" ||
      (action === "refund" && deps.actions.refund) ||
      (action === "redrive" && deps.actions.redrive);
    const order = await orderOr404(req, res);
    if (!order) return;
    if (!available) {
      res.status(404).type("text").send("No such action");
      return;
    }
    const email = action === "resend" ? order.emails.find((e) => e.id === req.query.email) : undefined;
    if (action === "resend" && !email) {
      res.status(404).type("text").send("No such e-mail");
      return;
    }
    sendPage(
      res,
      <ConfirmPage
        csrf={csrf(req)}
        order={order}
        action={action}
        {...(email ? { emailId: email.id, template: email.template } : {})}
      />,
    );
  });

  /** Runs an action and shows the order again with what happened (or why not). */
  async function act(req: Request, res: Response, done: string, run: (orderId: string) => Promise<unknown>) {
    const orderId = String(req.params.id);
    if (!uuid.safeParse(orderId).success) {
      await showOrder(req, res);
      return;
    }
    try {
      await run(orderId);
    } catch (error) {
      if (!isAppError(error) || error.httpStatus >= 500) throw error;
      await showOrder(req, res, { text: error.message, bad: true }, error.httpStatus);
      return;
    }
    res.redirect(303, `/ops/orders/${orderId}?done=${encodeURIComponent(done)}`);
  }
  const field = (req: Request, name: string): string | undefined => {
    const value = (req.body as Record<string, unknown>)[name];
    return typeof value === "string" && value.trim() !== "" ? value.trim().slice(0, 500) : undefined;
  };

  router.post("/ops/orders/:id/cancel", (req, res) =>
    act(req, res, "Cancellation requested.", (id) => deps.actions.cancel(id, field(req, "reason"))),
  );
  router.post("/ops/orders/:id/emails/:emailId/resend", (req, res) =>
    act(req, res, "E-mail re-sent.", (id) => {
      const emailId = String(req.params.emailId);
      if (!uuid.safeParse(emailId).success) throw new AppError("not_found", `No e-mail ${emailId}`);
      return deps.actions.resendEmail(id, emailId);
    }),
  );
  const { refund, redrive } = deps.actions;
  if (refund) {
    router.post("/ops/orders/:id/refund", (req, res) =>
      act(req, res, "Refund requested.", (id) => {
        const amount = amountField.safeParse((req.body as { amount?: unknown }).amount ?? "");
        if (!amount.success)
          throw new AppError(
            "validation_failed",
            "The amount must be a positive whole number of minor units",
          );
        return refund(id, amount.data, field(req, "reason"));
      }),
    );
  }
  if (redrive) {
    router.post("/ops/orders/:id/redrive", (req, res) =>
      act(req, res, "Re-drive requested.", (id) => redrive(id)),
    );
  }

  router.get("/ops/runs/:runId", async (req, res) => {
    const source = deps.runs;
    const run = source ? await source.run(String(req.params.runId)).catch(() => undefined) : undefined;
    const orderId = run
      ? (await db.orderTimelineEntry.findFirst({ where: { runId: run.runId }, select: { orderId: true } }))
          ?.orderId
      : undefined;
    sendPage(
      res,
      <OpsLayout title={`Run ${req.params.runId}`} csrf={csrf(req)}>
        <h1>Run</h1>
        {orderId ? (
          <p>
            Order <a href={`/ops/orders/${orderId}`}>{orderReference(orderId)}</a>
          </p>
        ) : null}
        <div class="card">
          {run ? (
            <Runs
              runs={[{ ...run, dashboardUrl: `/ops/runs/${run.runId}` }]}
              {...(source ? { source } : {})}
            />
          ) : (
            <p>No such run.</p>
          )}
        </div>
      </OpsLayout>,
      run ? 200 : 404,
    );
  });

  return router;
}
