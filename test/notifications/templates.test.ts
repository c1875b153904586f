import { messageIdFor, senderDomain } from "../../src/notifications/message-id";
import {
  emailTemplates,
  escapeHtml,
  formatMoney,
  lineMoneyOf,
  lineMoneyText,
  moneyRows,
  orderCancelled,
  outOfStock,
  paymentFailed,
  reviewRequest,
  shipped,
  shortLines,
  toOrderSummary,
  type OrderSummary,
} from "../../src/notifications/templates";

const orderId = "3f1c2a9e-7b4d-4c1e-9a2b-5d6e7f801234";
const order: OrderSummary = {
  orderId,
  currency: "usd",
  total: 4597,
  lines: [
    { name: 'Mug <b>"Bold"</b> & Co\'s', quantity: 2, unitPrice: 1299 },
    { name: "Tea", quantity: 1, unitPrice: 1999 },
  ],
};

describe("money formatting", () => {
  it("formats minor units with the currency's own number of decimals", () => {
    expect(formatMoney(4597, "usd")).toBe("$45.97");
    expect(formatMoney(1250, "EUR")).toBe("€12.50");
    expect(formatMoney(1500, "jpy")).toBe("¥1,500");
    expect(formatMoney(12345, "kwd")).toBe("KWD\u00a012.345");
    expect(formatMoney(0, "usd")).toBe("$0.00");
  });
});

describe("HTML escaping", () => {
  it("escapes every markup character", () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
    );
  });

  it("never lets order data inject markup into any template", () => {
    const rendered = [
      shipped({
        order,
        carrier: "<i>carrier</i>",
        trackingNumber: "SBX<1>",
        trackingUrl: "https://t.example/?a=1&b=2",
      }),
      reviewRequest({ order, reviewUrl: "https://shop.example/orders/x/review?sig=abc" }),
      paymentFailed({ order, reason: "<script>alert(1)</script>" }),
      outOfStock({ order, unavailable: ["<img src=x>"] }),
      orderCancelled({ order, settlement: { kind: "authorization-voided" } }),
    ];
    for (const { html } of rendered) {
      expect(html).not.toMatch(/<(b|i|script|img)[\s>]/);
      expect(html).toContain("Mug &lt;b&gt;&quot;Bold&quot;&lt;/b&gt; &amp; Co&#39;s");
    }
    expect(rendered[0]?.html).toContain('href="https://t.example/?a=1&amp;b=2"');
    expect(rendered[2]?.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("refuses to link to anything but http(s)", () => {
    expect(() =>
      shipped({ order, carrier: "x", trackingNumber: "1", trackingUrl: "javascript:alert(1)" }),
    ).toThrow(/javascript:/);
  });
});

describe("templates", () => {
  it("shipped: tracking number and link, lines and total", () => {
    const email = shipped({
      order,
      carrier: "USPS",
      trackingNumber: "SBXABC123",
      trackingUrl: "https://shop.example/track/SBXABC123",
    });
    expect(email.subject).toBe("Your order 3F1C2A9E is on its way");
    for (const part of [email.text, email.html]) {
      expect(part).toContain("SBXABC123");
      expect(part).toContain("https://shop.example/track/SBXABC123");
      expect(part).toContain("$25.98");
      expect(part).toContain("$45.97");
    }
    expect(email.html).toContain('<a href="https://shop.example/track/SBXABC123">');
  });

  it("review request: links to the signed review page it is given, and to the order page", () => {
    const url = `https://shop.example/base/orders/${orderId}/review?sig=abc`;
    const orderUrl = `https://shop.example/base/orders/${orderId}?sig=def`;
    const email = reviewRequest({ order: { ...order, orderUrl }, reviewUrl: url });
    expect(email.text).toContain(url);
    expect(email.html).toContain(`href="${url}"`);
    expect(email.text).toContain(`View your order: ${orderUrl}`);
    expect(email.html).toContain(`href="${orderUrl}"`);
  });

  it("payment failed: the amount and that nothing was charged", () => {
    const email = paymentFailed({ order });
    expect(email.subject).toContain("could not take payment");
    expect(email.text).toContain("$45.97");
    expect(email.text).toContain("not been charged");
    expect(email.text).not.toContain("Reason");
  });

  it("out of stock: what ran out", () => {
    const email = outOfStock({ order, unavailable: ["Tea"] });
    expect(email.text).toContain("Tea sold out");
    expect(email.html).toContain("$45.97");
  });

  it("cancelled: says whether the payment was refunded or the hold released", () => {
    const refunded = orderCancelled({ order, settlement: { kind: "refunded", amount: 4597 } });
    const voided = orderCancelled({ order, settlement: { kind: "authorization-voided" } });
    expect(refunded.text).toContain("refunded $45.97");
    expect(voided.text).toContain("never charged");
    expect(voided.text).not.toContain("refunded");
    const unpaid = orderCancelled({ order, settlement: { kind: "not-charged" } });
    expect(unpaid.text).toContain("You have not been charged");
    expect(unpaid.text).not.toContain("hold");
  });

  it("short lines: names what does not ship with its price, what ships, and whether it was not charged or refunded", () => {
    const notCharged = shortLines({
      order,
      short: [{ name: "Tea", quantity: 1, amount: 1999 }],
      shipping: [{ name: 'Mug <b>"Bold"</b> & Co\'s', quantity: 2 }],
      settlement: "not-charged",
      amount: 1999,
    });
    expect(notCharged.subject).toBe("Part of order 3F1C2A9E is not available");
    expect(notCharged.text).toContain("1 × Tea  $19.99");
    expect(notCharged.text).toContain("You have not been charged for them");
    expect(notCharged.text).toContain('2 × Mug <b>"Bold"</b> & Co\'s');
    expect(notCharged.html).toContain("Mug &lt;b&gt;&quot;Bold&quot;&lt;/b&gt; &amp; Co&#39;s");
    expect(notCharged.html).not.toContain("<b>");
    const refunded = shortLines({
      order,
      short: [{ name: "Tea", quantity: 1, amount: 1999 }],
      shipping: [],
      settlement: "refunded",
      amount: 1999,
    });
    expect(refunded.text).toContain("We have refunded $19.99 for them");
    expect(refunded.text).not.toContain("not been charged");
  });

  it("every template is registered by the name stored with the e-mail", () => {
    expect(Object.keys(emailTemplates).sort()).toEqual(
      [
        "freshLink",
        "addressCorrection",
        "deliveryException",
        "orderCancelled",
        "outOfStock",
        "paymentFailed",
        "refunded",
        "reviewRequest",
        "shipped",
        "shortLines",
        "returnLabel",
        "exchangeShipped",
        "exchangeChargeFailed",
        "exchangePaymentNeeded",
      ].sort(),
    );
  });

  it("the refused exchange charge e-mail says what, why and that nothing was sent or charged, escaped", () => {
    const mail = emailTemplates.exchangeChargeFailed({
      order,
      lines: [{ name: "Mug <XL>", quantity: 1 }],
      amount: 500,
      reason: "authentication_required",
    });
    expect(mail.subject).toMatch(/exchange .* is on hold/);
    expect(mail.text).toContain("difference of $5.00");
    expect(mail.text).toContain("asked to confirm the payment");
    expect(mail.text).toContain("have not sent the new items and have not charged you");
    expect(mail.html).toContain("Mug &lt;XL&gt;");
    const declined = emailTemplates.exchangeChargeFailed({
      order,
      lines: [],
      amount: 500,
      reason: "declined",
    });
    expect(declined.text).toContain("Your bank declined it.");
  });

  it("the exchange's Checkout e-mail links Stripe's page, says the difference and until when, escaped", () => {
    const mail = emailTemplates.exchangePaymentNeeded({
      order,
      lines: [{ name: "Mug <XL>", quantity: 1 }],
      amount: 500,
      payUrl: "https://checkout.stripe.com/c/pay/cs_test_1",
      payBy: "2026-12-03T13:00:00.000Z",
    });
    expect(mail.subject).toMatch(/exchange .* confirm the payment of the difference/);
    expect(mail.text).toContain("difference of $5.00");
    expect(mail.text).toContain("Pay the difference: https://checkout.stripe.com/c/pay/cs_test_1");
    expect(mail.text).toContain("by 2026-12-03T13:00:00.000Z");
    expect(mail.html).toContain('href="https://checkout.stripe.com/c/pay/cs_test_1"');
    expect(mail.html).toContain("Mug &lt;XL&gt;");
  });

  it("the return label e-mail links the label and the tracking, escaped, and says the refund", () => {
    const mail = emailTemplates.returnLabel({
      order,
      lines: [{ name: "Mug <b>", quantity: 1 }],
      labelUrl: "https://labels.example/shp_1.png",
      trackingNumber: "9400100000000000000001",
      trackingUrl: "https://track.example/9400",
      refundAmount: 1169,
    });
    expect(mail.subject).toMatch(/return label/);
    expect(mail.html).toContain('href="https://labels.example/shp_1.png"');
    expect(mail.html).toContain("Mug &lt;b&gt;");
    expect(mail.text).toContain("https://labels.example/shp_1.png");
    expect(mail.text).toContain("$11.69");
    // Rendered again without a label on record: no empty link.
    const bare = emailTemplates.returnLabel({
      order,
      lines: [],
      labelUrl: "",
      trackingNumber: "",
      trackingUrl: "",
      refundAmount: 0,
    });
    expect(bare.html).not.toContain('href=""');
  });

  it("the exchange e-mail links the new item's tracking", () => {
    const mail = emailTemplates.exchangeShipped({
      order,
      lines: [{ name: "Small mug", quantity: 1 }],
      trackingNumber: "EZ1",
      trackingUrl: "https://track.example/EZ1",
    });
    expect(mail.subject).toMatch(/exchange .* is on its way/);
    expect(mail.html).toContain('href="https://track.example/EZ1"');
    expect(mail.text).toContain("1 × Small mug");
  });

  it("builds the summary from an order row with lines", () => {
    const summary = toOrderSummary({
      id: orderId,
      currency: "usd",
      total: 1299,
      lines: [{ name: "Mug", quantity: 1, unitPrice: 1299, sku: "MUG" } as never],
    });
    expect(summary).toEqual({
      orderId,
      currency: "usd",
      total: 1299,
      lines: [{ name: "Mug", quantity: 1, unitPrice: 1299 }],
    });
  });
});

describe("a tax-inclusive breakdown (decision 0204)", () => {
  const breakdown = {
    currency: "usd",
    subtotal: 8490,
    shipping: 1500,
    discount: 1274,
    tax: 597,
    total: 8716,
    shippingRate: null,
    lines: [
      {
        sku: "BEANS",
        quantity: 3,
        amountSubtotal: 7500,
        amountDiscount: 1125,
        amountTax: 431,
        amountTotal: 6375,
        taxInclusive: true,
      },
      {
        sku: "FILTERS",
        quantity: 1,
        amountSubtotal: 990,
        amountDiscount: 149,
        amountTax: 57,
        amountTotal: 841,
        taxInclusive: true,
      },
      { sku: "FREE", quantity: 1, amountSubtotal: 0, amountDiscount: 0, amountTax: 0, amountTotal: 0 },
    ],
  };

  it("labels the order's tax as included, and each line's discount and the tax inside it", () => {
    const summary = toOrderSummary({
      id: orderId,
      currency: "usd",
      total: 8716,
      lines: [],
      moneyBreakdown: breakdown,
    });
    expect(moneyRows(summary)).toContainEqual(["Tax (included)", "$5.97"]);
    const lines = lineMoneyOf(breakdown);
    expect(lineMoneyText(lines.get("BEANS"), "usd")).toBe("discount −$11.25 · includes tax $4.31");
    expect(lines.has("FREE")).toBe(false);
    expect(lineMoneyText(lines.get("FREE"), "usd")).toBeNull();
  });

  it("an exclusive one says Tax, added", () => {
    const exclusive = {
      ...breakdown,
      lines: breakdown.lines.map(({ taxInclusive: _inclusive, ...line }) => line),
    };
    const summary = toOrderSummary({
      id: orderId,
      currency: "usd",
      total: 8716,
      lines: [],
      moneyBreakdown: exclusive,
    });
    expect(moneyRows(summary)).toContainEqual(["Tax", "$5.97"]);
    expect(lineMoneyText(lineMoneyOf(exclusive).get("FILTERS"), "usd")).toBe("discount −$1.49 · tax $0.57");
    expect(lineMoneyOf(null).size).toBe(0);
  });
});

describe("Message-ID", () => {
  it("is derived from the idempotency key and the sender's domain", () => {
    expect(senderDomain("Shop <Orders@Shop.Example>")).toBe("shop.example");
    expect(senderDomain("orders@shop.example")).toBe("shop.example");
    expect(messageIdFor(`shipped-${orderId}`, "Shop <orders@shop.example>")).toBe(
      `<shipped-${orderId}@shop.example>`,
    );
  });

  it("hashes keys that are not valid inside a Message-ID", () => {
    const id = messageIdFor("weird key <with> spaces", "orders@shop.example");
    expect(id).toMatch(/^<[0-9a-f]{40}@shop\.example>$/);
    expect(messageIdFor("weird key <with> spaces", "orders@shop.example")).toBe(id);
  });
});
