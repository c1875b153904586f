import type Stripe from "stripe";
import type { StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { sessionParams, startSandbox } from "./harness";

/** Checkout's shipping address collection, as the Stripe stand-in offers it. */
describe("Stripe sandbox: shipping address collection", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
  });
  afterAll(() => sandbox.close());

  const withShipping = () => ({
    ...sessionParams(),
    payment_intent_data: { capture_method: "manual" as const },
    shipping_address_collection: { allowed_countries: ["US", "CA"] as const },
    phone_number_collection: { enabled: true },
  });

  it("keeps the allowed countries and puts the customer's address in collected_information.shipping_details", async () => {
    const session = await stripe.checkout.sessions.create({
      ...withShipping(),
      shipping_address_collection: { allowed_countries: ["US", "CA"] },
    });
    expect(session.shipping_address_collection).toEqual({ allowed_countries: ["US", "CA"] });
    expect(session.phone_number_collection).toEqual({ enabled: true });

    await sandbox.completeCheckoutSession(session.id, "authorized", {
      deliver: false,
      shipping: {
        name: "Ada Lovelace",
        phone: "+16135550123",
        address: {
          line1: "24 Sussex Dr",
          city: "Ottawa",
          state: "ON",
          postal_code: "K1M 1M4",
          country: "CA",
        },
      },
    });

    const completed = await stripe.checkout.sessions.retrieve(session.id);
    expect(completed.collected_information?.shipping_details).toEqual({
      name: "Ada Lovelace",
      address: {
        line1: "24 Sussex Dr",
        line2: null,
        city: "Ottawa",
        state: "ON",
        postal_code: "K1M 1M4",
        country: "CA",
      },
    });
    expect(completed.customer_details).toMatchObject({ name: "Ada Lovelace", phone: "+16135550123" });
  });

  it("refuses an address outside the allowed countries (the hosted page offers no other)", async () => {
    const session = await stripe.checkout.sessions.create({
      ...withShipping(),
      shipping_address_collection: { allowed_countries: ["US"] },
    });
    await expect(
      (async () =>
        sandbox.completeCheckoutSession(session.id, "authorized", {
          deliver: false,
          shipping: {
            name: "X",
            address: { line1: "1 Rue", city: "Paris", postal_code: "75001", country: "FR" },
          },
        }))(),
    ).rejects.toThrow(/ships to US only/);
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe("open");
  });

  it("rejects allowed_countries that are not country codes, the way Stripe does", async () => {
    await expect(
      stripe.checkout.sessions.create({
        ...withShipping(),
        shipping_address_collection: { allowed_countries: ["usa" as never] },
      }),
    ).rejects.toMatchObject({
      type: "StripeInvalidRequestError",
      param: "shipping_address_collection[allowed_countries][0]",
    });
  });

  it("collects nothing when the session did not ask", async () => {
    const session = await stripe.checkout.sessions.create({
      ...sessionParams(),
      payment_intent_data: { capture_method: "manual" },
    });
    await sandbox.completeCheckoutSession(session.id, "authorized", { deliver: false });
    const completed = await stripe.checkout.sessions.retrieve(session.id);
    expect(completed.shipping_address_collection).toBeNull();
    expect(completed.collected_information).toBeNull();
  });
});
