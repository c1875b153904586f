import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(180_000);

const hour = 3_600_000;

/**
 * What the every-minute crons did is now started by events (docs/decisions/0190): an e-mail the
 * mail server refused, an ops alert, a checkout that took a product down to its threshold. Nothing
 * they did may be lost: each still happens, once, and the slow safety-net crons cover an event that
 * never went. The outbox's backoff runs on the wall clock, which this harness does not move, so a
 * retry is made due by hand where a test needs it.
 */
describe("idle crons become events: nothing the crons did is lost", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    // A real grouping window: alerts wait for it and go as one message (the harness's default is 0s).
    h = await WorkflowHarness.start({ env: { ALERT_GROUP_WINDOW: "2m" } });
    await h.addProduct("IDLE-1", 50);
  });
  afterAll(() => h.close());
  afterEach(() => {
    h.smtp.refuseNext(0);
    h.slack.answerWith(200);
  });

  const mentioning = (bodies: unknown[], text: string) =>
    bodies.filter((body) => JSON.stringify(body).includes(text));

  it("an e-mail refused during an SMTP outage goes once the server is back, by its own event's run", async () => {
    h.smtp.refuseNext(1_000);
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "IDLE-1", quantity: 1 }] });
    await h.placeOrder(orderId);
    await h.settle(2);
    let order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.emails.map((email) => [email.template, email.status])).toEqual([["shipped", "failed"]]);
    // The refused e-mail's event started one run, which waits for the retry.
    const waiting = await h.runsOfFunction("send-held-back-emails");
    expect(waiting.map((run) => run.status)).toEqual(["Running"]);

    h.smtp.refuseNext(0);
    await h.db.emailMessage.updateMany({ where: { orderId }, data: { nextAttemptAt: new Date(0) } });
    await h.settle(3);

    order = await h.order(orderId);
    expect(order.emails.map((email) => [email.template, email.status])).toEqual([["shipped", "sent"]]);
    expect(h.mailsTo(/on its way/).map((mail) => mail.messageId)).toEqual([
      `<shipped-${orderId}@shop.example>`,
    ]);
    // Sent by that run (its output is encrypted like every step's): it completed.
    expect((await h.runsOfFunction("send-held-back-emails")).map((run) => run.status)).toEqual(["Completed"]);

    // Nothing sends it again: not the run, not the safety-net cron six hours on.
    await h.engine.clock.advance(6 * hour);
    await h.settle(2);
    expect(h.mailsTo(/on its way/).filter((mail) => mail.messageId?.includes(orderId))).toHaveLength(1);
  });

  it("an e-mail whose event never went is sent by the safety-net cron", async () => {
    // As a process that died between the refused attempt and its event leaves it.
    await h.db.emailMessage.create({
      data: {
        idempotencyKey: "idle-test-orphan",
        template: "shipped",
        recipient: "buyer@example.com",
        status: "failed",
        messageId: "<idle-test-orphan@shop.example>",
        subject: "An orphaned e-mail",
        bodyText: "sent by the safety net",
        bodyHtml: "<p>sent by the safety net</p>",
        attempts: 1,
        nextAttemptAt: new Date(0),
      },
    });
    await h.engine.clock.advance(6 * hour);
    await h.settle(2);
    expect(h.mailsTo(/An orphaned e-mail/).map((mail) => mail.messageId)).toEqual([
      "<idle-test-orphan@shop.example>",
    ]);
    const row = await h.db.emailMessage.findUniqueOrThrow({ where: { idempotencyKey: "idle-test-orphan" } });
    expect(row.status).toBe("sent");
  });

  it("alerts raised together wait for the window and go as one message, once, through a Slack failure", async () => {
    const before = (await h.runsOfFunction("deliver-alert-group")).length;
    h.slack.answerNext([500]);
    for (const n of [1, 2, 3])
      await h.services.alerts.notify({ title: "Idle test storm", fields: { n, action: "none" } });
    await h.engine.drain();
    // Inside the window: nothing sent yet, and one pending run for the three.
    expect(mentioning(h.slack.bodies, "Idle test storm")).toHaveLength(0);

    await h.engine.clock.advance(121_000);
    // The one message failed (500); the run waits for the outbox's backoff.
    expect(mentioning(h.slack.bodies, "Idle test storm")).toHaveLength(1);
    expect(mentioning(h.slack.accepted, "Idle test storm")).toHaveLength(0);

    await h.db.$executeRawUnsafe(`UPDATE ops_alerts SET next_attempt_at = now() - interval '1 second'`);
    await h.settle(3);
    const accepted = mentioning(h.slack.accepted, "Idle test storm");
    expect(accepted).toHaveLength(1);
    expect(JSON.stringify(accepted[0])).toContain("3× Idle test storm");
    expect(
      await h.db.opsAlert.count({ where: { groupKey: "notice:Idle test storm", deliveredAt: null } }),
    ).toBe(0);
    const runs = (await h.runsOfFunction("deliver-alert-group")).slice(before);
    expect(runs.map((run) => run.status)).toEqual(["Completed"]);

    // The safety-net cron finds nothing left to send.
    await h.engine.clock.advance(6 * hour);
    await h.settle(2);
    expect(mentioning(h.slack.accepted, "Idle test storm")).toHaveLength(1);
  });

  it("a checkout that takes a product to its threshold alerts ops once", async () => {
    await h.addProduct("IDLE-LOW", 7);
    await h.db.product.update({ where: { sku: "IDLE-LOW" }, data: { lowStockThreshold: 5 } });
    const before = (await h.runsOfFunction("watch-low-stock")).length;

    await h.checkoutPaidOrder({ customerId: "cus_low_1", items: [{ sku: "IDLE-LOW", quantity: 2 }] });
    await h.engine.drain();
    // The checkout's event started the watch at once (no cron was due) and it claimed the crossing.
    expect((await h.runsOfFunction("watch-low-stock")).length - before).toBe(1);
    expect(
      (await h.db.product.findUniqueOrThrow({ where: { sku: "IDLE-LOW" } })).lowStockAlertedAt,
    ).not.toBeNull();
    // Below the threshold again: already alerted, so no event and no second alert.
    await h.checkoutPaidOrder({ customerId: "cus_low_2", items: [{ sku: "IDLE-LOW", quantity: 1 }] });
    await h.engine.clock.advance(121_000);
    await h.engine.clock.advance(24 * hour);
    await h.settle(2);

    expect(mentioning(h.slack.accepted, "Low stock: Product IDLE-LOW")).toHaveLength(1);
    const product = await h.db.product.findUniqueOrThrow({ where: { sku: "IDLE-LOW" } });
    expect(product.lowStockAlertedAt).not.toBeNull();
  });
});
