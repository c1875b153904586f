import express, { Router, type Request } from "express";
import { rateLimit } from "express-rate-limit";
import { secretsEqual } from "../../shared/constant-time";
import { Layout, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";

function LoginPage(props: { error?: string; next: string; tokenFile?: string | undefined }) {
  return (
    <Layout title="Log in" section="Ops console" narrow>
      <h1>Log in</h1>
      <form class="card" method="post" action={`/ops/login?next=${encodeURIComponent(props.next)}`}>
        {props.error ? <p class="error">{props.error}</p> : null}
        <p>
          <label>
            {props.tokenFile
              ? `Admin token (ADMIN_API_TOKEN, generated into ${props.tokenFile})`
              : "Admin token (ADMIN_API_TOKEN)"}
            <br />
            <input type="password" name="token" autocomplete="current-password" required size={40} />
          </label>
        </p>
        <button type="submit">Log in</button>
      </form>
    </Layout>
  );
}

/** Only local paths: the login's `next` must not send anyone elsewhere. */
function localNext(value: unknown): string {
  return typeof value === "string" && /^\/ops(\/|\?|$)/.test(value) ? value : "/ops";
}

/** GET and POST /ops/login, POST /ops/logout. */
export function loginRoutes(deps: OpsConsoleDeps): Router {
  const router = Router();
  const { sessions } = deps;
  const form = express.urlencoded({ extended: false, limit: "10kb" });

  router.get("/ops/login", (req, res) => {
    sendPage(res, <LoginPage next={localNext(req.query.next)} tokenFile={deps.adminTokenFile} />);
  });
  const carriesToken = (req: Request) => {
    const token = (req.body as { token?: unknown } | undefined)?.token;
    return typeof token === "string" && secretsEqual(token, deps.adminToken);
  };
  router.post(
    "/ops/login",
    // The form first (10 kB at most), so that the limit can tell the right token from a guess.
    form,
    // Only failed logins count (a 401 answer), per client, per replica; the right token is never
    // counted nor refused, so nobody locks ops out of their console by guessing from their address.
    rateLimit({
      windowMs: 60_000,
      limit: deps.loginRateLimit ?? 5,
      skip: carriesToken,
      skipSuccessfulRequests: true,
      standardHeaders: "draft-7",
      legacyHeaders: false,
      handler: (req, res) => {
        sendPage(
          res,
          <LoginPage
            error="Too many failed logins from here; wait a minute."
            next={localNext(req.query.next)}
            tokenFile={deps.adminTokenFile}
          />,
          429,
        );
      },
    }),
    (req, res) => {
      if (!carriesToken(req)) {
        deps.logger.warn({ ip: req.ip }, "ops console: failed login");
        sendPage(
          res,
          <LoginPage
            error="That token is not the admin token."
            next={localNext(req.query.next)}
            tokenFile={deps.adminTokenFile}
          />,
          401,
        );
        return;
      }
      sessions.login(res);
      res.redirect(303, localNext(req.query.next));
    },
  );
  return router;
}

/** POST /ops/logout (behind the session check). */
export function logoutRoute(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.post("/ops/logout", async (req, res) => {
    await deps.sessions.logout(req, res);
    res.redirect(303, "/ops/login");
  });
  return router;
}
