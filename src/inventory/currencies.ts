/**
 * The currencies a product may be priced in: Stripe's presentment currencies
 * (https://docs.stripe.com/currencies, its three-decimal ones last), kept to those ISO 4217 and Intl know, so every price has a
 * real currency whose decimals Intl.NumberFormat can tell (src/shared/money.ts). Stripe publishes
 * the list only as a documentation page, not in its SDK, hence this copy.
 *
 * Left out: ISK, which Stripe takes in a two-decimal form although it has no minor unit (Intl,
 * and so our pages and e-mails, would show 1000 ISK where Stripe charged 10); a shop selling in ISK
 * needs that conversion first.
 */
const stripeCurrencies = `usd aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bif bmd bnd bob brl bsd
bwp byn bzd cad cdf chf clp cny cop crc cve czk djf dkk dop dzd egp etb eur fjd fkp gbp gel gip gmd gnf gtq gyd
hkd hnl htg huf idr ils inr jmd jpy kes kgs khr kmf krw kyd kzt lak lbp lkr lrd lsl mad mdl mga mkd mmk mnt mop
mur mvr mwk mxn myr mzn nad ngn nio nok npr nzd pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd scr sek
sgd shp sle sos srd std szl thb tjs top try ttd twd tzs uah ugx uyu uzs vnd vuv wst xaf xcd xof xpf yer zar zmw
bhd jod kwd omr tnd`
  .split(/\s+/)
  .filter((code) => code !== "");

/** ISO 4217 as this Node's Intl knows it (older runtimes without supportedValuesOf: trust the list). */
const isoCurrencies: ReadonlySet<string> | undefined =
  typeof Intl.supportedValuesOf === "function"
    ? new Set(Intl.supportedValuesOf("currency").map((code) => code.toLowerCase()))
    : undefined;

export const supportedCurrencies: ReadonlySet<string> = new Set(
  stripeCurrencies.filter((code) => isoCurrencies === undefined || isoCurrencies.has(code)),
);

/** A three-letter code, either case, of a currency Stripe charges in ("usd", "JPY"; not "xxx"). */
export function isSupportedCurrency(code: string): boolean {
  return supportedCurrencies.has(code.toLowerCase());
}
