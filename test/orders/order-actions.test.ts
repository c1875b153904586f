import request from "supertest";
import { defined } from "../support/defined";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * Each order action through both doors of the service as wired (src/wiring.ts): the admin API and
 * the ops console run the one use case, so the same request changes the same things and writes the
 * same timeline entry (but for who asked), and the same refusal comes back from each.
 * test/orders/order-actions-doors.test.ts shows the doors make the same call.
 */
describe("order actions, through the admin API and the ops console alike", () => {
  let h: WorkflowHarness;
  let consolePost: (path: string, form?: Record<string, string>) => request.Test;
  let cookie = "";

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    const login = await request(h.appUrl)
      .post("/ops/login")
      .type("form")
      .send({ token: adminToken })
      .expect(303);
    cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
    const page = await request(h.appUrl).get("/ops").set("Cookie", cookie).expect(200);
    const csrf = defined(/name="_csrf" value="([^"]+)"/.exec(page.text)?.[1]);
    consolePost = (path, form = {}) =>
      request(h.appUrl)
        .post(path)
        .set("Cookie", cookie)
        .type("form")
        .send({ ...form, _csrf: csrf });
  });
  afterAll(() => h.close());

  const apiPost = (path: string, body: Record<string, unknown> = {}) =>
    request(h.appUrl).post(path).set("Authorization", `Bearer ${adminToken}`).send(body);

  /** The timeline entries of `kind`, without their times. */
  const entries = async (orderId: string, kind: string) =>
    (await h.order(orderId)).timeline.filter((entry) => entry.kind === kind).map((entry) => entry.detail);

  /** The console answers a refusal with the order's page and the use case's message. */
  /** The console answers a refusal POST with 303 to the order page, which shows it. */
  const afterRedirect = async (posted: request.Test) => {
    const res = await posted.expect(303);
    const location = String(res.headers.location);
    expect(location).toMatch(/\?refused=/);
    return request(h.appUrl).get(location).set("Cookie", cookie).expect(200);
  };
  const refusalShown = (page: request.Response, message: string) =>
    expect(page.text.replace(/&#39;|&apos;/g, "'")).toContain(message);

  it("cancel: marks the order, records the reason and who asked; refuses an unpaid order the same way", async () => {
    await h.addProduct("DOOR-CANCEL", 10);
    const viaApi = await h.createPaidOrder({ items: [{ sku: "DOOR-CANCEL", quantity: 1 }] });
    const viaConsole = await h.createPaidOrder({ items: [{ sku: "DOOR-CANCEL", quantity: 1 }] });

    await apiPost(`/api/orders/${viaApi.orderId}/cancel`, { reason: "phoned" }).expect(202);
    await consolePost(`/ops/orders/${viaConsole.orderId}/cancel`, { reason: "phoned" }).expect(303);

    for (const [order, by] of [
      [viaApi, "admin-api"],
      [viaConsole, "ops-console"],
    ] as const) {
      expect((await h.order(order.orderId)).cancelRequestedAt).not.toBeNull();
      expect(await entries(order.orderId, "cancel-requested")).toEqual([{ reason: "phoned", by }]);
    }

    const unpaid = await h.db.order.create({
      data: { customerId: "cus_door", email: "door@example.com", currency: "usd", total: 100 },
    });
    const refusedApi = await apiPost(`/api/orders/${unpaid.id}/cancel`).expect(409);
    const refusedConsole = await afterRedirect(consolePost(`/ops/orders/${unpaid.id}/cancel`));
    expect(refusedApi.body.error.code).toBe("order_not_cancellable");
    refusalShown(refusedConsole, refusedApi.body.error.message);
  });

  it("re-drive: hands the order to a new run generation and says who asked; refuses a shipped order the same way", async () => {
    await h.addProduct("DOOR-REDRIVE", 10);
    const viaApi = await h.createPaidOrder({ items: [{ sku: "DOOR-REDRIVE", quantity: 1 }] });
    const viaConsole = await h.createPaidOrder({ items: [{ sku: "DOOR-REDRIVE", quantity: 1 }] });

    const accepted = await apiPost(`/api/orders/${viaApi.orderId}/redrive`).expect(202);
    await consolePost(`/ops/orders/${viaConsole.orderId}/redrive`).expect(303);

    expect(accepted.body).toMatchObject({ status: "redrive_requested", generation: 1 });
    for (const [order, by] of [
      [viaApi, "admin-api"],
      [viaConsole, "ops-console"],
    ] as const) {
      expect((await h.order(order.orderId)).redriveGeneration).toBe(1);
      expect(await entries(order.orderId, "redriven")).toEqual([{ generation: 1, by }]);
    }

    const shipped = await h.db.order.create({
      data: {
        customerId: "cus_door",
        email: "door@example.com",
        currency: "usd",
        total: 100,
        status: "shipped",
      },
    });
    const refusedApi = await apiPost(`/api/orders/${shipped.id}/redrive`).expect(409);
    const refusedConsole = await afterRedirect(consolePost(`/ops/orders/${shipped.id}/redrive`));
    expect(refusedApi.body.error.code).toBe("order_not_redrivable");
    refusalShown(refusedConsole, refusedApi.body.error.message);
  });

  it("refund: one refund at Stripe per request from either door, against one capture; refuses too much the same way", async () => {
    await h.addProduct("DOOR-REFUND", 10, 2000);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      items: [{ sku: "DOOR-REFUND", quantity: 1 }],
      outcome: "paid",
    });
    await h.db.payment.create({
      data: {
        orderId,
        providerId: paymentIntentId,
        status: "captured",
        currency: "usd",
        amountAuthorized: 2000,
        amountCaptured: 2000,
      },
    });

    await apiPost(`/api/orders/${orderId}/refund`, { amount: 500, reason: "dented" }).expect(201);
    await consolePost(`/ops/orders/${orderId}/refund`, { amount: "3.00", reason: "dented" }).expect(303);

    const refunds = await h.db.refund.findMany({ where: { orderId }, orderBy: { createdAt: "asc" } });
    expect(refunds.map(({ amount, status, reason }) => ({ amount, status, reason }))).toEqual([
      { amount: 500, status: "succeeded", reason: "dented" },
      { amount: 300, status: "succeeded", reason: "dented" },
    ]);
    expect((await h.order(orderId)).payment?.amountRefunded).toBe(800);
    expect(await entries(orderId, "refund-requested")).toEqual([
      { refundId: refunds[0]?.id, amount: 500, reason: "dented", by: "admin-api" },
      { refundId: refunds[1]?.id, amount: 300, reason: "dented", by: "ops-console" },
    ]);

    const refusedApi = await apiPost(`/api/orders/${orderId}/refund`, { amount: 1500 }).expect(409);
    const refusedConsole = await afterRedirect(
      consolePost(`/ops/orders/${orderId}/refund`, { amount: "15.00" }),
    );
    expect(refusedApi.body.error.code).toBe("refund_exceeds_captured");
    // The console reads money in the currency's major unit, so it words the same refusal in it.
    refusalShown(refusedConsole, "$15.00 is more than is left to refund: $12.00");
    expect(await h.db.refund.count({ where: { orderId } })).toBe(2);
  });

  it("re-send: one new e-mail per request from either door, each under its own key; refuses an unknown e-mail the same way", async () => {
    await h.addProduct("DOOR-RESEND", 10);
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "DOOR-RESEND", quantity: 1 }] });
    await h.placeOrder(orderId);
    await h.settle();
    const shipped = defined((await h.order(orderId)).emails.find((email) => email.template === "shipped"));

    await apiPost(`/api/orders/${orderId}/emails/${shipped.id}/resend`).expect(201);
    await consolePost(`/ops/orders/${orderId}/emails/${shipped.id}/resend`).expect(303);

    const keys = (await h.order(orderId)).emails.map((email) => email.idempotencyKey).sort();
    expect(keys).toEqual(
      expect.arrayContaining([`shipped-${orderId}-resend-1`, `shipped-${orderId}-resend-2`]),
    );
    expect(await entries(orderId, "email-resent")).toEqual([
      { template: "shipped", of: `shipped-${orderId}`, as: `shipped-${orderId}-resend-1`, by: "admin-api" },
      { template: "shipped", of: `shipped-${orderId}`, as: `shipped-${orderId}-resend-2`, by: "ops-console" },
    ]);

    const unknownEmail = "00000000-0000-4000-8000-0000000000e1";
    const refusedApi = await apiPost(`/api/orders/${orderId}/emails/${unknownEmail}/resend`).expect(404);
    const refusedConsole = await afterRedirect(
      consolePost(`/ops/orders/${orderId}/emails/${unknownEmail}/resend`),
    );
    expect(refusedApi.body.error.code).toBe("not_found");
    refusalShown(refusedConsole, refusedApi.body.error.message);
  });
});
