import { Router, type Request, type Response } from "express";
import { isAppError } from "../../errors";
import { lifecycleEvents } from "../../events/lifecycle";
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

type Notice = { text: string; bad: boolean };
/** What the create form held, shown again when it was refused. */
interface EndpointForm {
  url: string;
  description: string;
  eventTypes: string[];
}
/** A secret just made: on the answer page of its create or rotate, never again. */
interface ShownSecret {
  endpointId: string;
  url: string;
  secret: string;
  rotated: boolean;
  previousSecretExpiresAt: string | null;
}

function NewEndpointForm(props: { csrf: string; form?: EndpointForm }) {
  const chosen = new Set(props.form?.eventTypes ?? []);
  return (
    <form class="card" method="post" action="/ops/webhooks/endpoints" data-form="new-endpoint">
      <h2>New endpoint</h2>
      <input type="hidden" name="_csrf" value={props.csrf} />
      <p>
        <label>
          URL{" "}
          <input
            name="url"
            type="url"
            required
            maxLength={2048}
            size={60}
            placeholder="https://erp.example.com/hooks/shop"
            value={props.form?.url ?? ""}
          />
        </label>
      </p>
      <p>
        <label>
          Description{" "}
          <input name="description" maxLength={500} size={40} value={props.form?.description ?? ""} />
        </label>
      </p>
      <fieldset class="event-types">
        <legend>Event types</legend>
        {Object.keys(lifecycleEvents).map((name) => (
          <label key={name} class="small">
            <input type="checkbox" name="eventTypes" value={name} checked={chosen.has(name)} /> {name}{" "}
          </label>
        ))}
      </fieldset>
      <p>
        <button type="submit">Create endpoint</button>
      </p>
    </form>
  );
}

function SecretShownOnce(props: { shown: ShownSecret }) {
  const { shown } = props;
  return (
    <div class="notice" role="status" data-secret-for={shown.endpointId}>
      <p>
        {shown.rotated ? "New signing secret" : "Signing secret"} of <code>{shown.url}</code>, shown{" "}
        <strong>this once</strong>: copy it to the receiving system now.
      </p>
      <p>
        <code data-field="secret">{shown.secret}</code>
      </p>
      {shown.rotated && shown.previousSecretExpiresAt ? (
        <p class="small">
          The previous secret keeps signing beside it until {when(shown.previousSecretExpiresAt)}.
        </p>
      ) : null}
    </div>
  );
}

function EndpointActions(props: { csrf: string; endpoint: EndpointView }) {
  const base = `/ops/webhooks/endpoints/${props.endpoint.id}`;
  return (
    <div class="endpoint-actions">
      <form method="post" action={`${base}/rotate-secret`} class="inline">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <button class="secondary" type="submit">
          Rotate secret
        </button>
      </form>
      <form method="post" action={`${base}/enabled`} class="inline">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <input type="hidden" name="enabled" value={props.endpoint.enabled ? "false" : "true"} />
        <button class={props.endpoint.enabled ? "danger" : ""} type="submit">
          {props.endpoint.enabled ? "Disable" : "Enable"}
        </button>
      </form>
    </div>
  );
}

function WebhooksPage(props: {
  csrf: string;
  endpoints: { endpoint: EndpointView; deliveries: DeliveryView[] }[];
  notice?: Notice;
  shown?: ShownSecret;
  form?: EndpointForm;
}) {
  return (
    <OpsLayout title="Webhooks" csrf={props.csrf}>
      <h1>Webhook endpoints</h1>
      <p class="small muted">
        Signed deliveries of the lifecycle events (docs/webhooks.md), also managed through the admin API
        (/api/admin/webhook-endpoints).
      </p>
      {props.notice ? (
        <p class={`notice ${props.notice.bad ? "bad" : ""}`} role="status">
          {props.notice.text}
        </p>
      ) : null}
      {props.shown ? <SecretShownOnce shown={props.shown} /> : null}
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
            {endpoint.previousSecretExpiresAt ? (
              <span data-field="overlap">
                {" "}
                · previous secret signs until {when(endpoint.previousSecretExpiresAt)}
              </span>
            ) : null}
          </p>
          <EndpointActions csrf={props.csrf} endpoint={endpoint} />
          <Deliveries csrf={props.csrf} deliveries={deliveries} />
        </div>
      ))}
      <NewEndpointForm csrf={props.csrf} {...(props.form ? { form: props.form } : {})} />
    </OpsLayout>
  );
}

/** The create form's fields as the admin API's body; a lone checkbox comes as a string. */
function endpointFormOf(body: unknown): EndpointForm {
  const fields = (body ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value.trim() : "");
  const eventTypes = Array.isArray(fields.eventTypes)
    ? fields.eventTypes.filter((value): value is string => typeof value === "string")
    : typeof fields.eventTypes === "string"
      ? [fields.eventTypes]
      : [];
  return { url: text(fields.url), description: text(fields.description), eventTypes };
}

/**
 * /ops/webhooks: the endpoints, each with its delivery log and "send again"; create, rotate the
 * secret, enable and disable. The forms call the admin API's use cases (WebhookEndpoints), so a
 * refused form is the same 4xx and message, shown on the page, with nothing changed.
 */
export function webhooksPage(deps: OpsConsoleDeps, webhooks: WebhookEndpoints): Router {
  const router = Router();

  const render = async (
    req: Request,
    extra: { notice?: Notice; shown?: ShownSecret; form?: EndpointForm } = {},
  ) => {
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
        {...extra}
      />
    );
  };
  /** A use case's refusal (4xx) as the page with its message; anything else is the app's 500. */
  const refused = async (
    req: Request,
    res: Response,
    error: unknown,
    extra: { form?: EndpointForm } = {},
  ) => {
    if (!isAppError(error) || error.httpStatus >= 500) throw error;
    sendPage(
      res,
      await render(req, { notice: { text: error.message, bad: true }, ...extra }),
      error.httpStatus,
    );
  };

  router.get("/ops/webhooks", async (req, res) => {
    const sent = typeof req.query.sent === "string" ? req.query.sent : undefined;
    const changed = typeof req.query.changed === "string" ? req.query.changed : undefined;
    const notice = sent
      ? { text: `Sent again with webhook-id ${sent}`, bad: false }
      : changed === "enabled" || changed === "disabled"
        ? { text: `Endpoint ${changed}.`, bad: false }
        : undefined;
    sendPage(res, await render(req, notice ? { notice } : {}));
  });

  router.post("/ops/webhooks/endpoints", async (req, res) => {
    const form = endpointFormOf(req.body);
    try {
      const created = await webhooks.create({
        url: form.url,
        eventTypes: form.eventTypes,
        ...(form.description ? { description: form.description } : {}),
      });
      // The answer page is the one place the secret appears (no redirect: it would have to carry it).
      sendPage(
        res,
        await render(req, {
          shown: {
            endpointId: created.id,
            url: created.url,
            secret: created.secret,
            rotated: false,
            previousSecretExpiresAt: null,
          },
        }),
        201,
      );
    } catch (error) {
      await refused(req, res, error, { form });
    }
  });

  router.post("/ops/webhooks/endpoints/:id/rotate-secret", async (req, res) => {
    try {
      const rotated = await webhooks.rotateSecret(req.params.id, {});
      sendPage(
        res,
        await render(req, {
          shown: {
            endpointId: rotated.id,
            url: rotated.url,
            secret: rotated.secret,
            rotated: true,
            previousSecretExpiresAt: rotated.previousSecretExpiresAt,
          },
        }),
      );
    } catch (error) {
      await refused(req, res, error);
    }
  });

  router.post("/ops/webhooks/endpoints/:id/enabled", async (req, res) => {
    const value = (req.body as Record<string, unknown> | undefined)?.enabled;
    try {
      // Anything but the two values the form sends is the use case's own 400.
      const enabled = value === "true" ? true : value === "false" ? false : value;
      const endpoint = await webhooks.update(req.params.id, { enabled }, { via: "the ops console" });
      res.redirect(303, `/ops/webhooks?changed=${endpoint.enabled ? "enabled" : "disabled"}#${endpoint.id}`);
    } catch (error) {
      await refused(req, res, error);
    }
  });

  router.post("/ops/webhooks/deliveries/:id/send-again", async (req, res) => {
    try {
      const { webhookId } = await webhooks.sendAgain(req.params.id);
      res.redirect(303, `/ops/webhooks?sent=${encodeURIComponent(webhookId)}`);
    } catch (error) {
      await refused(req, res, error);
    }
  });

  return router;
}
