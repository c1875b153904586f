import { Router } from "express";
import { isAppError } from "../../errors";
import type { DeliveryView, EndpointView, WebhookEndpoints } from "../../webhooks/endpoints";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout } from "./layout";

const when = (iso: string | null) => (iso ? formatTime(new Date(iso)) : "—");

function Deliveries(props: { csrf: string; deliveries: DeliveryView[] }) {
  if (props.deliveries.length === 0) return <p class="muted">No delivery yet.</p>;
  return (
    <table class="deliveries">
      <caption>Delivery log (newest first)</caption>
      <thead>
        <tr>
          <th>Event</th>
          <th>Status</th>
          <th>Attempts</th>
          <th>Last answer</th>
          <th>Next attempt</th>
          <th>webhook-id</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {props.deliveries.map((delivery) => (
          <tr key={delivery.id} data-delivery={delivery.id} data-status={delivery.status}>
            <td>
              {delivery.eventName}
              {delivery.orderId ? (
                <>
                  {" "}
                  · <a href={`/ops/orders/${delivery.orderId}`}>order</a>
                </>
              ) : null}
            </td>
            <td>{delivery.status}</td>
            <td data-field="attempts">
              {delivery.attempts}
              <ol class="small muted">
                {delivery.attemptLog.map((attempt, index) => (
                  <li key={index} data-field="attempt">
                    {when(attempt.startedAt)}: {attempt.statusCode ?? attempt.error ?? "in flight"}
                    {attempt.kind === "send-again" ? " (sent again)" : ""}
                  </li>
                ))}
              </ol>
            </td>
            <td>
              {delivery.lastStatusCode ?? "—"}{" "}
              <span class="small muted">
                {(delivery.lastError ?? delivery.lastResponse ?? "").slice(0, 120)}
              </span>
            </td>
            <td>{when(delivery.nextAttemptAt)}</td>
            <td>
              <code>{delivery.webhookId}</code>
            </td>
            <td>
              <form
                method="post"
                action={`/ops/webhooks/deliveries/${delivery.id}/send-again`}
                class="inline"
              >
                <input type="hidden" name="_csrf" value={props.csrf} />
                <button class="secondary" type="submit">
                  Send again
                </button>
              </form>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function WebhooksPage(props: {
  csrf: string;
  endpoints: { endpoint: EndpointView; deliveries: DeliveryView[] }[];
  notice?: { text: string; bad: boolean };
}) {
  return (
    <OpsLayout title="Webhooks" csrf={props.csrf}>
      <h1>Webhook endpoints</h1>
      <p class="small muted">
        Signed deliveries of the lifecycle events (docs/webhooks.md). Endpoints are added, changed and rotated
        through the admin API (/api/admin/webhook-endpoints).
      </p>
      {props.notice ? <p class={`notice ${props.notice.bad ? "bad" : ""}`}>{props.notice.text}</p> : null}
      {props.endpoints.length === 0 ? <p class="card muted">No endpoint registered.</p> : null}
      {props.endpoints.map(({ endpoint, deliveries }) => (
        <div class="card" key={endpoint.id} id={endpoint.id} data-endpoint={endpoint.id}>
          <h2>
            <code>{endpoint.url}</code>{" "}
            <span data-field="enabled" class={endpoint.enabled ? "" : "error"}>
              {endpoint.enabled ? "enabled" : `disabled: ${endpoint.disabledReason ?? ""}`}
            </span>
          </h2>
          <p class="small">
            {endpoint.description ? `${endpoint.description} · ` : ""}
            {endpoint.eventTypes.join(", ")}
            {endpoint.failingSince ? ` · failing since ${when(endpoint.failingSince)}` : ""}
            {endpoint.previousSecretExpiresAt
              ? ` · previous secret signs until ${when(endpoint.previousSecretExpiresAt)}`
              : ""}
          </p>
          <Deliveries csrf={props.csrf} deliveries={deliveries} />
        </div>
      ))}
    </OpsLayout>
  );
}

/** /ops/webhooks: the endpoints, each with its delivery log, and "send again". */
export function webhooksPage(deps: OpsConsoleDeps, webhooks: WebhookEndpoints): Router {
  const router = Router();

  const render = async (req: Parameters<typeof csrfOf>[1], notice?: { text: string; bad: boolean }) => {
    const endpoints = await webhooks.list();
    return (
      <WebhooksPage
        csrf={csrfOf(deps, req)}
        endpoints={await Promise.all(
          endpoints.map(async (endpoint) => ({
            endpoint,
            deliveries: await webhooks.deliveries(endpoint.id, { limit: 20 }),
          })),
        )}
        {...(notice ? { notice } : {})}
      />
    );
  };

  router.get("/ops/webhooks", async (req, res) => {
    const sent = typeof req.query.sent === "string" ? req.query.sent : undefined;
    sendPage(
      res,
      await render(req, sent ? { text: `Sent again with webhook-id ${sent}`, bad: false } : undefined),
    );
  });

  router.post("/ops/webhooks/deliveries/:id/send-again", async (req, res) => {
    try {
      const { webhookId } = await webhooks.sendAgain(req.params.id);
      res.redirect(303, `/ops/webhooks?sent=${encodeURIComponent(webhookId)}`);
    } catch (error) {
      if (!isAppError(error) || error.httpStatus >= 500) throw error;
      sendPage(res, await render(req, { text: error.message, bad: true }), error.httpStatus);
    }
  });

  return router;
}
