import express from "express";
import request from "supertest";
import { AppError } from "../../src/errors";
import { errorHandler } from "../../src/http/errors";
import { createLogger } from "../../src/logger";
import { orderAdminRoutes } from "../../src/orders/admin-routes";
import type { OrderActions } from "../../src/orders/order-actions";
import type { OrderDetails } from "../../src/orders/order-details";
import type { OrderQueries } from "../../src/orders/order-queries";
import { createOpsSessions } from "../../src/pages";
import { opsConsole } from "../../src/pages/ops/routes";

/**
 * Every order action has one implementation, reached through both doors: the admin API and the
 * ops console are given the same OrderActions, and each door only turns its request into the
 * action's request (who asked: `by`) and its answer into JSON or a page. Here both doors stand on
 * one recording set of actions, per action: the same call from each, and the same refusal shown
 * by each. test/orders/order-actions.test.ts runs the real use cases through both doors.
 */

const adminToken = "doors-admin-token-0123456789";
const orderId = "3f1c2a9e-1111-4222-8333-444455556666";
const emailId = "7a1c2a9e-1111-4222-8333-444455556666";

const details: OrderDetails = {
  id: orderId,
  customerId: "cus_doors",
  email: "doors@example.com",
  status: "authorized",
  currency: "usd",
  total: 2500,
  money: null,
  checkoutSessionId: "cs_doors",
  paymentIntentId: "pi_doors",
  attentionReason: null,
  cancelRequestedAt: null,
  hold: null,
  shippingAddress: null,
  createdAt: new Date("2026-12-01T10:00:00Z"),
  updatedAt: new Date("2026-12-01T10:00:00Z"),
  lines: [{ sku: "MUG", name: "Mug", unitPrice: 2500, quantity: 1, shortQuantity: 0 }],
  reservations: [],
  payment: null,
  shipment: null,
  shipments: [],
  emails: [],
  timeline: [],
};

type Call = { action: keyof OrderActions; request: Record<string, unknown> };

function doors() {
  const calls: Call[] = [];
  let refusal: AppError | undefined;
  const record = (action: keyof OrderActions, answer: unknown) => async (req: object) => {
    calls.push({ action, request: { ...req } });
    if (refusal) throw refusal;
    return answer;
  };
  // A recording stand-in answers what the doors pass on, not a full outcome.
  const actions = {
    cancel: record("cancel", { orderId, status: "cancellation_requested" }),
    refund: record("refund", { refundId: "r1", orderId }),
    redrive: record("redrive", { orderId, status: "redrive_requested", generation: 1, eventId: "e1" }),
    resendEmail: record("resendEmail", { orderId, emailId }),
    hold: record("hold", { orderId, status: "held", reason: "high_risk", since: "2026-12-01T00:00:00.000Z" }),
    releaseHold: record("releaseHold", { orderId, status: "released", reason: "high_risk" }),
  } as unknown as OrderActions;
  const queries: OrderQueries = {
    search: async () => ({ orders: [], nextCursor: null }),
    details: async (id) => (id === orderId ? details : null),
    customerOrder: async () => null,
    orderOfRun: async () => null,
  };
  const logger = createLogger({ level: "silent" });
  const app = express();
  app.use(express.json());
  app.use("/api/orders", orderAdminRoutes({ adminToken, actions, queries }));
  app.use(
    opsConsole({
      adminToken,
      sessions: createOpsSessions({ adminToken, secure: false }),
      actions,
      queries,
      renderer: { render: async () => ({ subject: "", text: "", html: "" }) },
      logger,
    }),
  );
  app.use(errorHandler);
  return {
    app,
    calls,
    refuseWith(error: AppError) {
      refusal = error;
    },
  };
}

async function consoleSession(app: express.Express) {
  const login = await request(app).post("/ops/login").type("form").send({ token: adminToken }).expect(303);
  const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
  const page = await request(app).get("/ops").set("Cookie", cookie).expect(200);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
  expect(csrf).not.toBe("");
  return {
    post: (path: string, form: Record<string, string> = {}) =>
      request(app)
        .post(path)
        .set("Cookie", cookie)
        .type("form")
        .send({ ...form, _csrf: csrf }),
    get: (path: string) => request(app).get(path).set("Cookie", cookie),
  };
}

const api = (app: express.Express, path: string, body: Record<string, unknown> = {}) =>
  request(app).post(path).set("Authorization", `Bearer ${adminToken}`).send(body);

/** Each action, as each door is asked for it, and the request both must make of the use case. */
const cases = [
  {
    action: "cancel",
    api: { path: `/api/orders/${orderId}/cancel`, body: { reason: "customer phoned" }, status: 202 },
    console: { path: `/ops/orders/${orderId}/cancel`, form: { reason: "customer phoned" } },
    request: { orderId, reason: "customer phoned" },
  },
  {
    action: "refund",
    api: { path: `/api/orders/${orderId}/refund`, body: { amount: 700, reason: "dented" }, status: 201 },
    console: { path: `/ops/orders/${orderId}/refund`, form: { amount: "7.00", reason: "dented" } },
    request: { orderId, amount: 700, reason: "dented" },
  },
  {
    action: "redrive",
    api: { path: `/api/orders/${orderId}/redrive`, body: {}, status: 202 },
    console: { path: `/ops/orders/${orderId}/redrive`, form: {} },
    request: { orderId },
  },
  {
    action: "resendEmail",
    api: { path: `/api/orders/${orderId}/emails/${emailId}/resend`, body: {}, status: 201 },
    console: { path: `/ops/orders/${orderId}/emails/${emailId}/resend`, form: {} },
    request: { orderId, emailId },
  },
  {
    action: "hold",
    api: {
      path: `/api/orders/${orderId}/hold`,
      body: { reason: "high_risk", note: "countries differ" },
      status: 200,
    },
    console: { path: `/ops/orders/${orderId}/hold`, form: { reason: "high_risk", note: "countries differ" } },
    request: { orderId, reason: "high_risk", note: "countries differ" },
  },
  {
    action: "releaseHold",
    api: { path: `/api/orders/${orderId}/release-hold`, body: {}, status: 200 },
    console: { path: `/ops/orders/${orderId}/release-hold`, form: {} },
    request: { orderId },
  },
] as const;

describe.each(cases)("$action through both doors", (testCase) => {
  it("calls the one use case with the same request from the admin API and the console", async () => {
    const { app, calls } = doors();
    const session = await consoleSession(app);

    const viaApi = await api(app, testCase.api.path, testCase.api.body).expect(testCase.api.status);
    const viaConsole = await session.post(testCase.console.path, testCase.console.form).expect(303);

    expect(calls).toEqual([
      { action: testCase.action, request: { ...testCase.request, by: "admin-api" } },
      {
        action: testCase.action,
        request: expect.objectContaining({ ...testCase.request, by: "ops-console" }),
      },
    ]);
    // The console's request carries nothing the API's does not (an absent field is undefined).
    expect(Object.entries(calls[1]?.request ?? {}).filter(([, value]) => value !== undefined)).toEqual(
      Object.entries({ ...testCase.request, by: "ops-console" }),
    );
    expect(viaApi.body).toEqual(expect.objectContaining({ orderId }));
    expect(viaConsole.headers.location).toMatch(new RegExp(`^/ops/orders/${orderId}\\?done=`));
  });

  it("shows the use case's refusal through both doors, with its status and message", async () => {
    const { app, refuseWith } = doors();
    const session = await consoleSession(app);
    refuseWith(new AppError("conflict", `Order ${orderId} cannot do that now`));

    const viaApi = await api(app, testCase.api.path, testCase.api.body).expect(409);
    // The console: POST, then 303 to the order page, which shows the refusal.
    const viaConsole = await session.post(testCase.console.path, testCase.console.form).expect(303);

    expect(viaApi.body).toEqual({
      error: { code: "conflict", message: `Order ${orderId} cannot do that now` },
    });
    const location = String(viaConsole.headers.location);
    expect(location).toMatch(new RegExp(`^/ops/orders/${orderId}\\?refused=`));
    const page = await session.get(location).expect(200);
    expect(page.text).toContain(`Refused: Order ${orderId} cannot do that now`);
  });
});
