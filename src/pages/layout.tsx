import { createHash } from "node:crypto";
import type { Response } from "express";
import { createContext, type ComponentChildren, type VNode } from "preact";
import { useContext } from "preact/hooks";
import { render } from "preact-render-to-string";
import { brandStylesheet, defaultBrand, type Brand } from "../shared/brand";

/**
 * Pages are typed JSX rendered to a string on the server (preact-render-to-string escapes every
 * interpolated value); htmx, served from node_modules, swaps the live parts. No front-end build.
 */
export const htmxPath = "/assets/htmx.min.js";

/**
 * The pages' one stylesheet, served from our origin (the Content-Security-Policy allows no inline
 * style) under a path named by its content, so it can be cached for good and a deploy that
 * changes it changes the path.
 */
export const styles = `
:root{color-scheme:light;--ink:#1a1f36;--muted:#697386;--line:#e3e8ee;--accent:#635bff;--ok:#0e7a4d;--bad:#c0123c;--warn:#a35a00;--bg:#f6f9fc}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg)}
header.bar{background:#fff;border-bottom:1px solid var(--line);padding:.75rem 1rem;display:flex;gap:1rem;align-items:center;flex-wrap:wrap}
header.bar strong{font-size:1.05rem}header.bar nav{display:flex;gap:1rem;margin-left:auto;align-items:center}
main{max-width:60rem;margin:0 auto;padding:1rem}main.narrow{max-width:34rem}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem}
h1{font-size:1.5rem;margin:.25rem 0 1rem}h2{font-size:1.1rem;margin:0 0 .75rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:.85rem}td.num,th.num{text-align:right}
.muted{color:var(--muted)}.small{font-size:.85rem}code{font-size:.85em;word-break:break-all}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;background:#eef0ff;color:var(--accent)}
.badge.ok{background:#e3f7ec;color:var(--ok)}.badge.bad{background:#fde7ec;color:var(--bad)}.badge.warn{background:#fff3e0;color:var(--warn)}
a{color:var(--accent)}button,.button{font:inherit;border:0;border-radius:6px;padding:.5rem 1rem;background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:var(--ink);border:1px solid var(--line)}button.danger{background:var(--bad)}
input,select,textarea{font:inherit;padding:.45rem .6rem;border:1px solid var(--line);border-radius:6px;background:#fff;max-width:100%}
form.inline{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center}
.steps{list-style:none;padding:0;margin:0}.steps li{padding:.35rem 0;border-bottom:1px solid var(--line)}
.error{color:var(--bad)}.notice{border-left:4px solid var(--accent);padding:.5rem 1rem;background:#fff;margin:0 0 1rem}
.notice.bad{border-color:var(--bad)}iframe{width:100%;min-height:28rem;border:1px solid var(--line);border-radius:6px;background:#fff}
.stars{display:flex;gap:.3rem;flex-wrap:nowrap}.stars label{border:1px solid var(--line);border-radius:6px;padding:.3rem .4rem;background:#fff;white-space:nowrap;letter-spacing:-.05em}
fieldset.stars{border:0;padding:0}h2.spaced{margin-top:1rem}pre.wrap{white-space:pre-wrap}h3.step-title{font-size:1rem;margin:.75rem 0 .25rem}
header.bar .brand{display:flex;gap:.5rem;align-items:center;color:var(--ink);text-decoration:none}header.bar img.logo{max-height:2rem;max-width:8rem}
footer.shop{max-width:60rem;margin:0 auto;padding:1rem;color:var(--muted);font-size:.85rem}footer.shop p{margin:.25rem 0}
fieldset.return-line{min-width:0;border:1px solid var(--line);border-radius:6px;margin:0 0 .75rem;padding:.25rem .75rem}
.return-line select{width:100%;min-width:0;text-overflow:ellipsis}.return-line label{display:block}
.endpoint-actions{display:flex;gap:.5rem;margin:0 0 .75rem}fieldset.event-types{border:1px solid var(--line);border-radius:6px}fieldset.event-types label{display:inline-block;margin:0 1rem .25rem 0;white-space:nowrap}
@media (max-width:40rem){th.hide,td.hide{display:none}main{padding:.5rem}.stars{flex-wrap:wrap}}
`;

export const stylesPath = `/assets/app-${createHash("sha256").update(styles).digest("hex").slice(0, 12)}.css`;

/**
 * A warning every page of a request shows at its top (the ops console's "alerts are not reaching
 * Slack"); set in `res.locals.banner` by a router's middleware.
 */
const BannerContext = createContext<string | undefined>(undefined);

/**
 * The shop's brand (name, logo, colour, support, legal footer) every page of a request shows; set
 * in `res.locals.brand` by the pages' router from configuration.
 */
const BrandContext = createContext<Brand>(defaultBrand);

/** The brand of the page being rendered, for a component that names the shop. */
export function useBrand(): Brand {
  return useContext(BrandContext);
}

function ShopFooter(): VNode {
  const brand = useBrand();
  return (
    <footer class="shop">
      {brand.supportEmail || brand.supportUrl ? (
        <p>
          Questions about your order?{" "}
          {brand.supportUrl ? <a href={brand.supportUrl}>Visit our help page</a> : null}
          {brand.supportUrl && brand.supportEmail ? " or write to " : brand.supportEmail ? "Write to " : null}
          {brand.supportEmail ? <a href={`mailto:${brand.supportEmail}`}>{brand.supportEmail}</a> : null}
        </p>
      ) : null}
      <p>{brand.footer ?? brand.name}</p>
    </footer>
  );
}

function Banner(): VNode | null {
  const banner = useContext(BannerContext);
  return banner === undefined ? null : (
    <p class="notice bad" role="alert">
      {banner}
    </p>
  );
}

export function Layout(props: {
  title: string;
  children: ComponentChildren;
  nav?: ComponentChildren;
  /** Replaces the shop's name in the header (the service's own pages: API reference, dev inbox). */
  brand?: string;
  /** A part of the service beside the shop's name ("Ops console"): no customer footer. */
  section?: string;
  narrow?: boolean;
  /** Pages with live parts load htmx. */
  live?: boolean;
}): VNode {
  const brand = useBrand();
  const customerFacing = props.brand === undefined && props.section === undefined;
  const title =
    props.brand !== undefined
      ? props.title
      : `${props.title} · ${brand.name}${props.section ? ` ${props.section.toLowerCase()}` : ""}`;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {/* htmx would otherwise inject its indicator styles inline. */}
        <meta name="htmx-config" content='{"includeIndicatorStyles":false}' />
        <title>{title}</title>
        <link rel="stylesheet" href={stylesPath} />
        {props.brand === undefined ? <link rel="stylesheet" href={brandStylesheet(brand).path} /> : null}
        {props.live ? <script src={htmxPath} defer /> : null}
      </head>
      <body>
        <header class="bar">
          {props.brand !== undefined ? (
            <strong>{props.brand}</strong>
          ) : (
            <strong class="brand" data-shop-name={brand.name}>
              {brand.logoUrl ? <img class="logo" src={brand.logoUrl} alt="" /> : null}
              <span>{brand.name}</span>
              {props.section ? <span class="muted">{props.section}</span> : null}
            </strong>
          )}
          {props.nav ? <nav>{props.nav}</nav> : null}
        </header>
        <main class={props.narrow ? "narrow" : undefined}>
          <Banner />
          {props.children}
        </main>
        {customerFacing ? <ShopFooter /> : null}
      </body>
    </html>
  );
}

export function renderPage(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}

/** Sends a whole page; pages are never cached (they show live order state and CSRF tokens). */
export function sendPage(res: Response, page: VNode, status = 200): void {
  const banner = typeof res.locals.banner === "string" ? res.locals.banner : undefined;
  const brand = (res.locals.brand as Brand | undefined) ?? defaultBrand;
  res
    .status(status)
    .type("html")
    .setHeader("Cache-Control", "no-store")
    .send(
      renderPage(
        <BrandContext.Provider value={brand}>
          <BannerContext.Provider value={banner}>{page}</BannerContext.Provider>
        </BrandContext.Provider>,
      ),
    );
}

/** Sends a fragment that htmx swaps into a page. */
export function sendFragment(res: Response, fragment: VNode): void {
  const brand = (res.locals.brand as Brand | undefined) ?? defaultBrand;
  res
    .type("html")
    .setHeader("Cache-Control", "no-store")
    .send(render(<BrandContext.Provider value={brand}>{fragment}</BrandContext.Provider>));
}

export function MessagePage(props: { title: string; children: ComponentChildren; brand?: string }): VNode {
  return (
    <Layout title={props.title} narrow brand={props.brand}>
      <div class="card">
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </Layout>
  );
}

export function formatTime(at: Date | string | null | undefined): string {
  if (at === null || at === undefined) return "—";
  const date = typeof at === "string" ? new Date(at) : at;
  return date
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
}
