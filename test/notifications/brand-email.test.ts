import { defaultBrand } from "../../src/shared/brand";
import { emailTemplates } from "../../src/notifications/templates";
import { brandEmail } from "../../src/notifications/templates/brand";

const order = {
  orderId: "3f1c2a9e-1111-4222-8333-444455556666",
  currency: "usd",
  total: 2400,
  lines: [{ name: "Mug", quantity: 2, unitPrice: 1200 }],
  orderUrl: "https://shop.example/orders/3f1c2a9e-1111-4222-8333-444455556666?sig=x",
};
const brand = {
  name: 'Bob\'s <b>"Mugs"</b>',
  accentColor: "#123abc",
  logoUrl: "https://cdn.example/logo.png",
  supportEmail: "help@bob.example",
  supportUrl: "https://bob.example/help",
  footer: "Bob's Mugs LLC · 1 Main St",
};

describe("the shop's brand on an e-mail", () => {
  it("heads the HTML with the name and logo in the accent colour, colours its links, signs both parts off", () => {
    const content = brandEmail(
      emailTemplates.reviewRequest({ order, reviewUrl: `${order.orderUrl}&r=1` }),
      brand,
    );
    expect(content.html).toMatch(
      /<body[^>]*><div\s+data-shop-header\s+style="border-bottom:3px solid #123abc/,
    );
    expect(content.html).toContain('<img src="https://cdn.example/logo.png"');
    // The name is escaped like every value in our e-mails.
    expect(content.html).toContain("Bob&#39;s &lt;b&gt;&quot;Mugs&quot;&lt;/b&gt;");
    expect(content.html).not.toContain('<b>"Mugs"</b>');
    expect(content.html).toContain('<a style="color:#123abc" href="https://shop.example/orders/');
    expect(content.html).toContain('href="mailto:help@bob.example"');
    expect(content.html).toContain("Bob&#39;s Mugs LLC · 1 Main St");
    expect(content.text).toMatch(
      /— Bob's <b>"Mugs"<\/b>\nHelp: https:\/\/bob\.example\/help\nQuestions\? Write to help@bob\.example\n\nBob's Mugs LLC · 1 Main St$/,
    );
  });

  it("is put on once, however many times it passes (a re-send of a rendered e-mail)", () => {
    const once = brandEmail(
      emailTemplates.shipped({
        order,
        carrier: "USPS",
        trackingNumber: "1Z",
        trackingUrl: "https://t.example/1Z",
      }),
      brand,
    );
    expect(brandEmail(once, brand)).toEqual(once);
    expect(once.html.match(/data-shop-header/g)).toHaveLength(1);
  });

  it("reads well with the defaults: the neutral name, no help or legal lines", () => {
    const content = brandEmail(
      emailTemplates.shipped({
        order,
        carrier: "USPS",
        trackingNumber: "1Z",
        trackingUrl: "https://t.example/1Z",
      }),
      defaultBrand,
    );
    expect(content.text).toMatch(/Thank you for shopping with us\.\n\n— Online shop$/);
    expect(content.html).not.toContain("Questions?");
  });
});
