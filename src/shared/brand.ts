import { createHash } from "node:crypto";

/**
 * The shop as its customers know it: its name on every customer page, e-mail and the ops console's
 * title, its logo and accent colour, where to get help, and the legal line under everything.
 * Built once from configuration (SHOP_* variables, src/config.ts) and handed to pages and e-mails.
 */
export interface Brand {
  name: string;
  /** An http(s) image; pages and e-mails show it beside the name. */
  logoUrl?: string;
  /** A validated hex colour (#rgb or #rrggbb): buttons, links and the e-mails' header rule. */
  accentColor: string;
  supportEmail?: string;
  supportUrl?: string;
  /** The legal line (company, registered address, VAT number). */
  footer?: string;
}

export const defaultBrand: Brand = { name: "Online shop", accentColor: "#635bff" };

export function brandFromConfig(config: {
  SHOP_NAME: string;
  SHOP_LOGO_URL?: string | undefined;
  SHOP_ACCENT_COLOR: string;
  SHOP_SUPPORT_EMAIL?: string | undefined;
  SHOP_SUPPORT_URL?: string | undefined;
  SHOP_FOOTER?: string | undefined;
}): Brand {
  return {
    name: config.SHOP_NAME,
    accentColor: config.SHOP_ACCENT_COLOR,
    ...(config.SHOP_LOGO_URL ? { logoUrl: config.SHOP_LOGO_URL } : {}),
    ...(config.SHOP_SUPPORT_EMAIL ? { supportEmail: config.SHOP_SUPPORT_EMAIL } : {}),
    ...(config.SHOP_SUPPORT_URL ? { supportUrl: config.SHOP_SUPPORT_URL } : {}),
    ...(config.SHOP_FOOTER ? { footer: config.SHOP_FOOTER } : {}),
  };
}

/**
 * The brand's stylesheet: only the accent colour, served from our origin (the Content-Security-Policy
 * allows no inline style) under a path named by its content, like the pages' own stylesheet.
 */
export function brandStylesheet(brand: Pick<Brand, "accentColor">): { path: string; css: string } {
  // The colour is validated by the config schema; checked again so no caller can inject CSS.
  if (!/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(brand.accentColor)) {
    throw new Error(`not a hex colour: ${brand.accentColor}`);
  }
  const css = `:root{--accent:${brand.accentColor}}\n`;
  return { path: `/assets/brand-${createHash("sha256").update(css).digest("hex").slice(0, 12)}.css`, css };
}

/** The logo's origin, which the pages' Content-Security-Policy must allow images from. */
export function logoOrigin(brand: Pick<Brand, "logoUrl">): string | undefined {
  return brand.logoUrl ? new URL(brand.logoUrl).origin : undefined;
}
