import { shipmentDelivered } from "../../src/events/contracts";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

/**
 * An SMTP outage loses no e-mail. With the mail server refusing every attempt, the order must still go
 * shipped -> delivered -> completed (the review request follows), and once the server is back the outbox
 * (run by the engine) sends each e-mail once.
 */
describe("an SMTP outage loses no e-mail (the whole workflow)", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("OUTAGE-1", 10);
  });
  afterAll(() => h.close());

  it("the workflow goes on through the outage, and the held e-mails go out once when SMTP is back", async () => {
    h.smtp.refuseNext(1_000); // down for every attempt
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "OUTAGE-1", quantity: 1 }] });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    let order = await h.order(orderId);
    expect(order.status).toBe("shipped");

    const delivered = shipmentDelivered.create({
      orderId,
      trackingNumber: order.shipment?.trackingNumber ?? "",
      deliveredAt: new Date().toISOString(),
    });
    await h.send(delivered.name, delivered.data);
    await h.engine.drain();
    await h.engine.clock.advance(3 * 24 * 3600 * 1000);
    await h.settle(3);

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Completed");
    order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(order.timeline.map((entry) => entry.kind)).toEqual(
      expect.arrayContaining(["confirmation-sent", "review-requested"]),
    );
    expect(order.emails.map((email) => [email.template, email.status]).sort()).toEqual([
      ["reviewRequest", "failed"],
      ["shipped", "failed"],
    ]);
    expect(h.smtp.accepted).toHaveLength(0);
    expect(h.smtp.refused.length).toBeGreaterThanOrEqual(2);

    // The server is back and the retries are due (the outbox's backoff runs on the wall clock,
    // which this harness does not move): the run its refused attempt started (send-held-back-emails) sends them.
    h.smtp.refuseNext(0);
    await h.db.emailMessage.updateMany({ where: { orderId }, data: { nextAttemptAt: new Date(0) } });
    await h.settle(2);

    order = await h.order(orderId);
    expect(order.emails.map((email) => [email.template, email.status]).sort()).toEqual([
      ["reviewRequest", "sent"],
      ["shipped", "sent"],
    ]);
    expect(h.mailsTo(/on its way/).map((mail) => mail.messageId)).toEqual([
      `<shipped-${orderId}@shop.example>`,
    ]);
    expect(h.mailsTo(/How was your order/).map((mail) => mail.messageId)).toEqual([
      `<review-${orderId}@shop.example>`,
    ]);

    // Later runs of the cron send nothing again.
    await h.settle(3);
    expect(h.smtp.accepted).toHaveLength(2);
  });
});
