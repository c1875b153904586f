import type Stripe from "stripe";
import { IntakeHarness, payloadOf } from "./intake-harness";

/** The shipping address: collected by Stripe Checkout, stored on the order by the webhook intake. */
describe("the shipping address at checkout and on the order", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start();
    await h.db.product.create({
      data: {
        sku: "EBOOK",
        name: "Field guide (PDF)",
        unitPrice: 900,
        currency: "usd",
        stockOnHand: 1000,
        digital: true,
      },
    });
  });
  afterAll(() => h.close());

  const shipping = {
    name: "Ada Lovelace",
    phone: "+16135550123",
    address: {
      line1: "24 Sussex Dr",
      line2: "Unit 2",
      city: "Ottawa",
      state: "ON",
      postal_code: "K1M 1M4",
      country: "CA",
    },
  };

  it("asks Checkout for an address in SHIPPING_COUNTRIES and a phone, and stores what the customer entered", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "MUG", quantity: 1 }], "cus-ship-1");
    const create = h.sandbox.requests.find(
      (r) => r.endpoint === "checkout.sessions.create" && r.params.client_reference_id === orderId,
    );
    expect(create?.params).toMatchObject({
      shipping_address_collection: { allowed_countries: ["US", "CA"] },
      phone_number_collection: { enabled: "true" },
    });

    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });

    await expect(h.order(orderId)).resolves.toMatchObject({
      status: "authorized",
      shippingAddress: {
        name: "Ada Lovelace",
        phone: "+16135550123",
        line1: "24 Sussex Dr",
        line2: "Unit 2",
        city: "Ottawa",
        state: "ON",
        postalCode: "K1M 1M4",
        country: "CA",
      },
    });
  });

  it("reads the address where API 2024-04-10 puts it (the session's top-level shipping_details) too", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "MUG", quantity: 1 }], "cus-ship-2");
    const done = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      shipping,
      deliver: false,
    });
    const completed = done.events.find((e) => e.type === "checkout.session.completed") as Stripe.Event;
    const legacy = structuredClone(completed);
    const session = legacy.data.object as unknown as Record<string, unknown>;
    const { shipping_details: details } = session.collected_information as { shipping_details: unknown };
    session.collected_information = null;
    session.shipping_details = details;

    expect((await h.deliver(payloadOf(legacy))).status).toBe(200);

    await expect(h.order(orderId)).resolves.toMatchObject({
      status: "authorized",
      shippingAddress: { line1: "24 Sussex Dr", postalCode: "K1M 1M4", country: "CA" },
    });
  });

  it("does not ask for an address when every product is digital", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "EBOOK", quantity: 1 }], "cus-ship-3");
    const create = h.sandbox.requests.find(
      (r) => r.endpoint === "checkout.sessions.create" && r.params.client_reference_id === orderId,
    );
    expect(create?.params.shipping_address_collection).toBeUndefined();

    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    await expect(h.order(orderId)).resolves.toMatchObject({ status: "authorized", shippingAddress: null });
  });

  it("a mixed cart (digital and physical) still asks for the address", async () => {
    const { orderId } = await h.checkout(
      [
        { sku: "EBOOK", quantity: 1 },
        { sku: "TEE", quantity: 1 },
      ],
      "cus-ship-4",
    );
    const create = h.sandbox.requests.find(
      (r) => r.endpoint === "checkout.sessions.create" && r.params.client_reference_id === orderId,
    );
    expect(create?.params.shipping_address_collection).toEqual({ allowed_countries: ["US", "CA"] });
  });
});
