/**
 * An e-mail's HTML shown in an iframe of the ops console or the dev inbox. Its links open in a
 * new tab, as from a mail reader, not inside the frame (where the order page or the carrier's
 * page would load squeezed into the preview): a <base target> makes every link do so, and the
 * frame's sandbox lets that tab, and only that, out (no scripts, no top navigation).
 */
export const emailFrameSandbox = "allow-popups allow-popups-to-escape-sandbox";

export function linksOpenOutside(html: string): string {
  const base = '<base target="_blank" />';
  if (/<head[^>]*>/i.test(html)) return html.replace(/<head[^>]*>/i, (head) => `${head}${base}`);
  return `${base}${html}`;
}
