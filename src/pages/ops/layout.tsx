import type { Request, Response } from "express";
import { Layout, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";

function Nav(props: { csrf: string }) {
  return (
    <>
      <a href="/ops">Orders</a>
      <a href="/ops?attention=any">Needs attention</a>
      <a href="/ops/products">Products</a>
      <a href="/ops/returns">Returns</a>
      <a href="/ops/reconciliation">Reconciliation</a>
      <a href="/ops/webhooks">Webhooks</a>
      <form method="post" action="/ops/logout" class="inline">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <button class="secondary" type="submit">
          Log out
        </button>
      </form>
    </>
  );
}

export function OpsLayout(props: { title: string; csrf: string; children: preact.ComponentChildren }) {
  return (
    <Layout title={props.title} section="Ops console" nav={<Nav csrf={props.csrf} />}>
      {props.children}
    </Layout>
  );
}

export function statusTone(status: string): string {
  if (["payment_failed", "cancelled_out_of_stock", "expired"].includes(status)) return "bad";
  if (["cancelled"].includes(status)) return "warn";
  if (["shipped", "delivered", "completed"].includes(status)) return "ok";
  return "";
}

/** The CSRF token of the request's session, for every form of a console page. */
export const csrfOf = (deps: Pick<OpsConsoleDeps, "sessions">, req: Request) =>
  deps.sessions.csrfToken(req) ?? "";

export function sendNotFound(deps: OpsConsoleDeps, req: Request, res: Response, text: string): void {
  sendPage(
    res,
    <OpsLayout title="Not found" csrf={csrfOf(deps, req)}>
      <p class="notice bad">{text}</p>
    </OpsLayout>,
    404,
  );
}
