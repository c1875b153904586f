import type { Brand } from "../../shared/brand";
import { assertWebUrl, html } from "./html";
import type { EmailContent } from "./types";

/**
 * Puts the shop's brand on a rendered e-mail: its name (and logo) in a header ruled in its accent
 * colour, and under the message a sign-off with its name, where to get help and the legal line;
 * the text part gets the same sign-off and footer. Applied where e-mails are sent and where the
 * console renders them again, so every template carries it without each repeating it.
 */
export function brandEmail(content: EmailContent, brand: Brand): EmailContent {
  // Once only: a re-send or a fresh link sends what the (branding) renderer made through the
  // (branding) sender.
  if (content.html.includes("data-shop-header")) return content;
  const help = [
    brand.supportUrl ? `Help: ${assertWebUrl(brand.supportUrl)}` : undefined,
    brand.supportEmail ? `Questions? Write to ${brand.supportEmail}` : undefined,
  ].filter((line): line is string => line !== undefined);
  const text = [
    content.text.trimEnd(),
    "",
    `— ${brand.name}`,
    ...help,
    ...(brand.footer ? ["", brand.footer] : []),
  ].join("\n");

  // The colour is a validated hex colour (src/config.ts); escaped like everything else anyway.
  const header = html`<div
    data-shop-header
    style="border-bottom:3px solid ${brand.accentColor};padding:0 0 8px;margin:0 0 16px"
  >
    ${
      brand.logoUrl
        ? html`<img src="${assertWebUrl(brand.logoUrl)}" alt="" height="32" style="vertical-align:middle" /> `
        : ""
    }<strong style="font-size:18px;color:${brand.accentColor}">${brand.name}</strong>
  </div>`;
  const footer = html`<div data-shop-footer style="margin:24px 0 0;color:#555;font-size:13px">
    <p>— ${brand.name}</p>
    ${
      brand.supportUrl || brand.supportEmail
        ? html`<p>
            ${
              brand.supportUrl
                ? html`<a href="${assertWebUrl(brand.supportUrl)}" style="color:${brand.accentColor}"
                    >Help</a
                  >`
                : ""
            }${brand.supportUrl && brand.supportEmail ? " · " : ""}${
              brand.supportEmail
                ? html`Questions? Write to
                    <a href="mailto:${brand.supportEmail}" style="color:${brand.accentColor}"
                      >${brand.supportEmail}</a
                    >`
                : ""
            }
          </p>`
        : ""
    }
    ${brand.footer ? html`<p style="color:#888;font-size:12px">${brand.footer}</p>` : ""}
  </div>`;
  const branded = content.html
    // The message's links take the shop's colour.
    .replace(/<a href="/g, `<a style="color:${brand.accentColor}" href="`)
    .replace(/<body([^>]*)>/, (open) => `${open}${header.value}`)
    .replace(/<\/body>/, () => `${footer.value}</body>`);
  return { subject: content.subject, text, html: branded };
}
