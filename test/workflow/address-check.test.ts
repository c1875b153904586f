import request from "supertest";
import { defined } from "../support/defined";
import { adminToken, testShippingAddress, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * The address check before the label, through EasyPost's stand-in (Address.create with verify,
 * driven by @easypost/api): an undeliverable address holds the order with the carrier's message,
 * tells ops once, e-mails the customer a signed link; the corrected address releases the hold and
 * the order ships there.
 */
describe("address check before buying the label", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const labelsFor = (orderId: string) =>
    defined(h.easyPost)
      .shipments()
      .filter((s) => s.reference === `order-${orderId}` && s.postage_label !== null);

  it("holds an undeliverable order, tells ops and the customer; the customer's correction releases it and it ships there", async () => {
    await h.addProduct("ADDR-1", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_addr",
      items: [{ sku: "ADDR-1", quantity: 1 }],
    });
    await h.db.order.update({
      where: { id: orderId },
      data: { shippingAddress: { ...testShippingAddress, line1: "1 Undeliverable Lane" } },
    });
    const slackBefore = h.slack.bodies.length;
    await h.placeOrder(orderId);
    await h.settle(3);

    const held = await h.order(orderId);
    expect(held.status).toBe("fulfilling");
    expect(held.holdReason).toBe("address");
    expect(held.holdNote).toBe("Address not found");
    expect(held.attentionReason).toMatch(/cannot deliver to the address: Address not found/);
    expect(labelsFor(orderId)).toHaveLength(0);
    expect(defined(h.easyPost).requests.filter((r) => r.endpoint === "addresses.create")).toHaveLength(1);
    expect(h.slack.bodies.length).toBe(slackBefore + 1);
    expect(JSON.stringify(h.slack.bodies.at(-1))).toContain("Address not found");
    const [mail, ...more] = h.mailsTo(/check the delivery address/);
    expect(more).toHaveLength(0);
    expect(mail?.text).toContain("The carrier says: Address not found");
    const link = defined(/https?:\/\/\S+\/address\?sig=\S+/.exec(mail?.text ?? "")?.[0]);
    const path = new URL(link).pathname + new URL(link).search;

    // A forged signature finds nothing; the real link shows the form with the carrier's words.
    await request(h.appUrl).get(`/orders/${orderId}/address?sig=forged`).expect(404);
    const form = await request(h.appUrl).get(path).expect(200);
    expect(form.text).toContain("Address not found");

    // Still undeliverable: refused with the carrier's message, nothing changes.
    const again = await request(h.appUrl)
      .post(path)
      .type("form")
      .send({ line1: "2 Undeliverable Lane", city: "Portland", postalCode: "97201", country: "US" })
      .expect(400);
    expect(again.text).toContain("The carrier cannot deliver there either: Address not found");
    expect((await h.order(orderId)).holdReason).toBe("address");

    await request(h.appUrl)
      .post(path)
      .type("form")
      .send({
        name: "Ada Lovelace",
        line1: "12 Analytical Row",
        city: "Portland",
        state: "OR",
        postalCode: "97201",
        country: "us",
      })
      .expect(200);
    await h.settle(3);

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.holdReason).toBeNull();
    expect(order.timeline.map((e) => e.kind)).toEqual(
      expect.arrayContaining(["address-undeliverable", "hold-placed", "address-corrected", "hold-released"]),
    );
    const [label, ...others] = labelsFor(orderId);
    expect(others).toHaveLength(0);
    // EasyPost normalises the destination when it buys (USPS capitals).
    expect(label?.to_address).toMatchObject({
      street1: expect.stringMatching(/^12 Analytical Row$/i),
      country: "US",
    });
    // The link is spent: nothing left to correct.
    await request(h.appUrl)
      .post(path)
      .type("form")
      .send({ line1: "x", city: "y", postalCode: "1", country: "US" })
      .expect(409);
  });

  it("an undeliverable order under an ops hold is not shipped when ops release it: the address hold follows, the customer's correction ships it", async () => {
    await h.addProduct("ADDR-3", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_addr_ops",
      items: [{ sku: "ADDR-3", quantity: 1 }],
    });
    await h.db.order.update({
      where: { id: orderId },
      data: { shippingAddress: { ...testShippingAddress, line1: "1 Undeliverable Lane" } },
    });
    const api = (path: string) =>
      request(h.appUrl).post(path).set("Authorization", `Bearer ${adminToken}`).send({ reason: "high_risk" });
    const addressMails = () =>
      h.mailsTo(/check the delivery address/).filter((m) => m.text?.includes(orderId));
    await api(`/api/orders/${orderId}/hold`).expect(200);
    const slackBefore = h.slack.bodies.length;
    await h.placeOrder(orderId);
    await h.settle(3);

    // Ops' hold stands: the carrier's verdict waits behind it, nobody is asked yet.
    expect((await h.order(orderId)).holdReason).toBe("high_risk");
    expect(labelsFor(orderId)).toHaveLength(0);
    expect(addressMails()).toHaveLength(0);

    await api(`/api/orders/${orderId}/release-hold`).expect(200);
    await h.settle(3);

    const held = await h.order(orderId);
    expect(held.status).toBe("fulfilling");
    expect(held.holdReason).toBe("address");
    expect(held.holdNote).toBe("Address not found");
    expect(labelsFor(orderId)).toHaveLength(0);
    const alerts = h.slack.bodies.slice(slackBefore).map((body) => JSON.stringify(body));
    expect(alerts.filter((body) => body.includes("cannot deliver to its address"))).toHaveLength(1);
    const mails = addressMails();
    expect(mails).toHaveLength(1);
    const link = defined(/https?:\/\/\S+\/address\?sig=\S+/.exec(mails[0]?.text ?? "")?.[0]);
    const path = new URL(link).pathname + new URL(link).search;

    await request(h.appUrl)
      .post(path)
      .type("form")
      .send({ line1: "12 Analytical Row", city: "Portland", state: "OR", postalCode: "97201", country: "US" })
      .expect(200);
    await h.settle(3);

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.holdReason).toBeNull();
    const [label, ...others] = labelsFor(orderId);
    expect(others).toHaveLength(0);
    // EasyPost normalises the destination when it buys (USPS capitals).
    expect(label?.to_address).toMatchObject({
      street1: expect.stringMatching(/^12 Analytical Row$/i),
      country: "US",
    });
    expect(addressMails()).toHaveLength(1);
  });

  it("a deliverable address ships without a hold", async () => {
    await h.addProduct("ADDR-2", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_addr_ok",
      items: [{ sku: "ADDR-2", quantity: 1 }],
    });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    await h.placeOrder(orderId);
    await h.settle(3);
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.timeline.map((e) => e.kind)).not.toContain("hold-placed");
  });
});
