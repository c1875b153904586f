import { defined } from "../support/defined";
import { testShippingAddress, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * Tracker statuses other than on-the-way and delivered, as EasyPost's stand-in sends them (signed
 * tracker.updated events): each flags the order, alerts ops once, and e-mails the customer where
 * they must act or wait.
 */
describe("carrier exceptions", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("EXC-1", 50);
  });
  afterAll(() => h.close());

  async function shippedOrder(customerId: string) {
    const { orderId } = await h.createPaidOrder({ customerId, items: [{ sku: "EXC-1", quantity: 1 }] });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    await h.placeOrder(orderId);
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("shipped");
    return orderId;
  }

  const cases = [
    {
      status: "available_for_pickup",
      flag: /holds the parcel for pickup/,
      mail: /waiting for you to pick it up/,
    },
    { status: "failure", flag: /delivery attempt failed/, mail: /could not be delivered today/ },
    { status: "return_to_sender", flag: /returned to sender/, mail: /on its way back to us/ },
    { status: "error", flag: /tracking error/, mail: null },
    { status: "cancelled", flag: /cancelled the shipment/, mail: null },
  ] as const;

  it.each(cases)("$status: the order flagged, one alert, the customer e-mail where it applies", async (c) => {
    const orderId = await shippedOrder(`cus_exc_${c.status}`);
    const slackBefore = h.slack.bodies.length;
    const mailsBefore = h.smtp.accepted.length;
    await defined(h.easyPost).advanceTracker(`order-${orderId}`, "in_transit");
    await defined(h.easyPost).advanceTracker(`order-${orderId}`, c.status);
    // EasyPost delivers an event again when it hears no 2xx in time: no second alert or e-mail.
    const repeat = defined(h.easyPost).deliveries.at(-1);
    expect(repeat?.responseStatus).toBe(200);
    await defined(h.easyPost).advanceTracker(`order-${orderId}`, c.status);

    const order = await h.order(orderId);
    expect(order.shipment?.trackerStatus).toBe(c.status);
    expect(order.attentionReason).toMatch(c.flag);
    expect(order.timeline.filter((e) => e.kind === "carrier-exception")).toHaveLength(1);
    expect(h.slack.bodies.length).toBe(slackBefore + 1);
    expect(JSON.stringify(h.slack.bodies.at(-1))).toContain(orderId);
    const mails = h.smtp.accepted.slice(mailsBefore);
    if (c.mail) {
      expect(mails.filter((m) => c.mail.test(m.subject ?? ""))).toHaveLength(1);
      expect(mails[0]?.text).toContain(order.shipment?.trackingNumber ?? "-");
    } else {
      expect(mails).toHaveLength(0);
    }
  });
});
