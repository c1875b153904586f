import { parseStripeParams } from "../../../src/dev/stripe-sandbox/form";

describe("Stripe form parameters", () => {
  it("rebuilds nested hashes and indexed arrays from bracket notation", () => {
    const body =
      "mode=payment&line_items[0][price_data][currency]=eur&line_items[0][price_data][unit_amount]=500" +
      "&line_items[0][price_data][product_data][name]=Mug%20%26%20Co&line_items[0][quantity]=2" +
      "&line_items[1][quantity]=1&metadata[orderId]=o-1&expand[0]=payment_intent";
    expect(parseStripeParams(body)).toEqual({
      mode: "payment",
      line_items: [
        {
          price_data: { currency: "eur", unit_amount: "500", product_data: { name: "Mug & Co" } },
          quantity: "2",
        },
        { quantity: "1" },
      ],
      metadata: { orderId: "o-1" },
      expand: ["payment_intent"],
    });
  });

  it("accepts percent-encoded brackets, empty brackets and more than twenty array items", () => {
    const many = Array.from({ length: 25 }, (_, i) => `types%5B${i}%5D=t${i}`).join("&");
    expect(parseStripeParams(many).types).toHaveLength(25);
    expect(parseStripeParams("types[]=a&types[]=b")).toEqual({ types: ["a", "b"] });
  });

  it("keeps numeric metadata keys as a hash and empty values as empty strings", () => {
    expect(parseStripeParams("metadata[0]=x&metadata[1]=y&description=")).toEqual({
      metadata: { "0": "x", "1": "y" },
      description: "",
    });
  });

  it("refuses a key that is both a value and a hash", () => {
    expect(() => parseStripeParams("metadata=x&metadata[a]=y")).toThrow(/mixes a value and nested fields/);
  });
});
