import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import request from "supertest";
import type { OrderActions } from "../../src/orders/order-actions";
import { createLogger } from "../../src/logger";
import { createCustomerLinks, createOpsSessions, createRunSource, deriveLinkSecret } from "../../src/pages";
import { opsConsole, type OpsConsoleDeps } from "../../src/pages/ops/routes";

const orderId = "3f1c2a9e-1111-4222-8333-444455556666";

describe("signed customer links", () => {
  const links = createCustomerLinks({ publicUrl: "https://shop.example/", secret: "s".repeat(32) });
  const sigOf = (url: string) => new URL(url).searchParams.get("sig");

  it("sign the order id per purpose: an order link is not a review link, another id does not verify", () => {
    const orderLink = links.order(orderId);
    expect(orderLink).toMatch(
      new RegExp(`^https://shop.example/orders/${orderId}\\?sig=[0-9a-z]+\\.[\\w-]{22}$`),
    );
    expect(links.verify("order", orderId, sigOf(orderLink))).toBe(true);
    expect(links.verify("review", orderId, sigOf(orderLink))).toBe(false);
    expect(links.verify("order", "3f1c2a9e-1111-4222-8333-444455556667", sigOf(orderLink))).toBe(false);
    expect(links.verify("order", orderId, undefined)).toBe(false);
    expect(links.verify("order", orderId, ["a"])).toBe(false);
    const other = createCustomerLinks({ publicUrl: "https://shop.example", secret: "t".repeat(32) });
    expect(other.verify("order", orderId, sigOf(orderLink))).toBe(false);
  });

  it("derive a development key from the admin token that is not the token", () => {
    expect(deriveLinkSecret("admin-token-0123456789")).not.toContain("admin-token");
    expect(deriveLinkSecret("admin-token-0123456789")).toBe(deriveLinkSecret("admin-token-0123456789"));
  });
});

describe("ops console sessions", () => {
  function app(now: () => number) {
    const sessions = createOpsSessions({ adminToken: "admin-token-0123456789", secure: true, now });
    const server = express();
    server.use(express.urlencoded({ extended: false }));
    server.post("/login", (_req, res) => {
      sessions.login(res);
      res.end();
    });
    server.get("/csrf", (req, res) => {
      res.json({ csrf: sessions.csrfToken(req) ?? null });
    });
    server.post("/logout", async (req, res) => {
      await sessions.logout(req, res);
      res.end();
    });
    server.use("/ops", sessions.require, (_req, res) => {
      res.json({ ok: true });
    });
    return server;
  }

  it("sets an HttpOnly, SameSite=Strict, Secure cookie; checks CSRF on POST; expire; logout revokes", async () => {
    let now = 1_000_000;
    const server = app(() => now);
    const login = await request(server).post("/login");
    const setCookie = String(login.headers["set-cookie"]);
    expect(setCookie).toMatch(
      /^ops_session=[^;]+; Max-Age=28800; Path=\/; HttpOnly; Secure; SameSite=Strict$/,
    );
    const cookie = setCookie.split(";")[0] as string;
    const { csrf } = (await request(server).get("/csrf").set("Cookie", cookie)).body as { csrf: string };

    await request(server).get("/ops").expect(303);
    await request(server).get("/ops").set("Cookie", cookie).expect(200);
    await request(server).post("/ops").set("Cookie", cookie).type("form").send({}).expect(403);
    await request(server).post("/ops").set("Cookie", cookie).type("form").send({ _csrf: "x" }).expect(403);
    await request(server).post("/ops").set("Cookie", cookie).type("form").send({ _csrf: csrf }).expect(200);
    await request(server).post("/ops").type("form").send({ _csrf: csrf }).expect(401);
    // A forged cookie (another expiry with the old MAC) is not a session.
    const forged = cookie.replace(/=(\d+)\./, (_m, expires: string) => `=${Number(expires) + 1}.`);
    await request(server).get("/ops").set("Cookie", forged).expect(303);

    now += 8 * 3600_000 + 1;
    await request(server).get("/ops").set("Cookie", cookie).expect(303);

    now = 1_000_000;
    await request(server).post("/logout").set("Cookie", cookie).expect(200);
    await request(server).get("/ops").set("Cookie", cookie).expect(303);
  });

  it("reads the session beside another site's cookie with a bad %-escape (no 500), and logs out with Max-Age=0", async () => {
    const server = app(() => 1_000_000);
    const cookie = String((await request(server).post("/login")).headers["set-cookie"]).split(
      ";",
    )[0] as string;
    await request(server).get("/ops").set("Cookie", `ops_session=%E0%A4%A`).expect(303);
    await request(server).get("/ops").set("Cookie", `theme=%E0%A4%A; ${cookie}`).expect(200);
    const logout = await request(server).post("/logout").set("Cookie", cookie).expect(200);
    expect(String(logout.headers["set-cookie"])).toBe(
      "ops_session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict",
    );
  });
});

describe("run source", () => {
  it("reads a run from Inngest's REST API with the signing key, and links the dashboard", async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      if (req.url === "/v1/runs/01RUN") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            data: {
              run_id: "01RUN",
              function_id: "shop-fulfill-order",
              status: "Failed",
              run_started_at: "2026-11-30T10:00:00Z",
              ended_at: "2026-11-30T10:00:05Z",
              output: { error: "x" },
            },
          }),
        );
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const source = createRunSource({
        apiBase: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        signingKey: "signkey-prod-abc",
        label: "the Inngest REST API",
        runUrlTemplate: "https://app.inngest.com/env/production/runs/{runId}",
      });
      expect(await source.run("01RUN")).toEqual({
        runId: "01RUN",
        functionId: "shop-fulfill-order",
        status: "Failed",
        startedAt: "2026-11-30T10:00:00Z",
        endedAt: "2026-11-30T10:00:05Z",
        steps: [],
        pending: [],
        dashboardUrl: "https://app.inngest.com/env/production/runs/01RUN",
      });
      expect(await source.run("missing")).toBeUndefined();
      expect(seen[0]).toBe("GET /v1/runs/01RUN Bearer signkey-prod-abc");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("ops console login", () => {
  it("is rate limited: after five failed logins a client gets 429 for wrong tokens, the right one still logs in", async () => {
    const sessions = createOpsSessions({ adminToken: "admin-token-0123456789", secure: false });
    const app = express().use(
      opsConsole({
        adminToken: "admin-token-0123456789",
        sessions,
        actions: unused<OrderActions>("actions"),
        queries: unused<OpsConsoleDeps["queries"]>("queries"),
        renderer: { render: async () => ({ subject: "", text: "", html: "" }) },
        logger: createLogger({ level: "silent" }),
      }),
    );
    const login = (token: string) => request(app).post("/ops/login").type("form").send({ token });
    for (let i = 0; i < 3; i += 1) await login("admin-token-0123456789").expect(303);
    for (let i = 0; i < 5; i += 1) await login("wrong").expect(401);
    const limited = await login("wrong").expect(429);
    expect(limited.text).toContain("Too many failed logins");
    // Locked out for wrong tokens only: a guesser cannot lock ops out of their own console.
    const ok = await login("admin-token-0123456789").expect(303);
    expect(String(ok.headers["set-cookie"])).toContain("HttpOnly");
    await login("wrong").expect(429);
    await login("also wrong").expect(429);
  });
});

/** A dependency the login never reaches: any use of it fails the test. */
function unused<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, name) => {
      throw new Error(`${what}.${String(name)} is not used by the login`);
    },
  });
}
