import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import { createLogger } from "../../src/logger";
import { lazyEasyPostClient } from "../../src/shipping/easypost-carrier";
import {
  createEasyPostRateQuoter,
  LiveRatesUnavailable,
  livePicksOf,
  offerLiveRates,
  priceLiveRate,
  type CarrierRate,
} from "../../src/shipping/live-rates";

const rate = (
  carrier: string,
  service: string,
  amount: number,
  deliveryDays: number | null,
): CarrierRate => ({
  carrier,
  service,
  amount,
  currency: "usd",
  deliveryDays,
});

describe("the shop's live-rate policy (pure)", () => {
  const rates = [
    rate("USPS", "GroundAdvantage", 776, 5),
    rate("USPS", "Priority", 1190, 2),
    rate("UPS", "NextDayAir", 4050, 1),
    rate("USPS", "Express", 3355, 1),
    rate("FedEx", "SMART_POST", 700, null),
  ];
  const policy = { picks: ["cheapest", "fastest"] as const, markupPercent: 0, roundUpTo: 1 };

  it("keeps the cheapest, then the fastest (ties to the cheaper); a rate without days is never the fastest", () => {
    expect(offerLiveRates(rates, policy, "usd").map((q) => [q.rateId, q.amount])).toEqual([
      ["live-fedex-smart_post", 700],
      ["live-usps-express", 3355],
    ]);
    expect(
      offerLiveRates(rates, { ...policy, picks: ["fastest", "cheapest"] }, "usd").map((q) => q.rateId),
    ).toEqual(["live-usps-express", "live-fedex-smart_post"]);
  });

  it("offers a rate that is both the cheapest and the fastest once", () => {
    const both = [rate("USPS", "Priority", 900, 2), rate("UPS", "Ground", 1000, 4)];
    expect(offerLiveRates(both, policy, "usd").map((q) => q.rateId)).toEqual(["live-usps-priority"]);
  });

  it("names the carrier service and the delivery estimate; no estimate without days", () => {
    const [cheapest, fastest] = offerLiveRates(rates, policy, "usd");
    expect(cheapest).toMatchObject({
      displayName: "FedEx SMART_POST",
      deliveryEstimate: null,
      carrierService: { carrier: "FedEx", service: "SMART_POST" },
    });
    expect(fastest).toMatchObject({
      displayName: "USPS Express",
      currency: "usd",
      deliveryEstimate: {
        minimum: { unit: "business_day", value: 1 },
        maximum: { unit: "business_day", value: 1 },
      },
      carrierService: { carrier: "USPS", service: "Express" },
    });
  });

  it("marks up by a percent, rounded up to whole minor units, then up to a multiple", () => {
    expect(priceLiveRate(776, { markupPercent: 0, roundUpTo: 1 })).toBe(776);
    expect(priceLiveRate(776, { markupPercent: 10, roundUpTo: 1 })).toBe(854); // 853.6
    expect(priceLiveRate(776, { markupPercent: 10, roundUpTo: 50 })).toBe(900);
    expect(priceLiveRate(1000, { markupPercent: 10, roundUpTo: 100 })).toBe(1100); // exact stays
    expect(priceLiveRate(1001, { markupPercent: 0, roundUpTo: 100 })).toBe(1100);
  });

  it("offers nothing in another currency than the order's (Stripe prices shipping in the session's)", () => {
    expect(offerLiveRates(rates, policy, "eur")).toEqual([]);
    expect(offerLiveRates([], policy, "usd")).toEqual([]);
  });

  it("reads CHECKOUT_LIVE_RATES", () => {
    expect(livePicksOf("off")).toEqual([]);
    expect(livePicksOf("fastest")).toEqual(["fastest"]);
    expect(livePicksOf("cheapest,fastest,cheapest")).toEqual(["cheapest", "fastest"]);
  });
});

describe("EasyPost's rates for a parcel plan (the official client against the EasyPost stand-in)", () => {
  let easyPost: EasyPostSandbox;
  const warehouse = {
    name: "Shop Warehouse",
    line1: "417 Montgomery St",
    city: "San Francisco",
    state: "CA",
    postalCode: "94104",
    country: "US",
  };
  const quoter = () =>
    createEasyPostRateQuoter({
      client: lazyEasyPostClient({ apiKey: "EZTK_quotes", apiBase: easyPost.apiBase ?? "" }),
      warehouse,
    });
  beforeAll(async () => {
    easyPost = createEasyPostSandbox({
      webhookSecret: "easypost_quote_secret",
      logger: createLogger({ level: "silent" }),
    });
    await easyPost.listen(0, "127.0.0.1");
  });
  afterAll(() => easyPost.close());

  it("rates each parcel to the postal code and adds them up per service (the slowest parcel's days)", async () => {
    const before = easyPost.shipments().length;
    const quoted = await quoter().quote({ country: "US", region: "NY", postalCode: "10001" }, [
      { weightOz: 32 },
      { weightOz: 10 },
    ]);
    const rated = easyPost.shipments().slice(before);
    expect(rated.map((s) => s.parcel.weight)).toEqual([32, 10]);
    expect(rated.every((s) => s.postage_label === null && s.reference === null)).toBe(true);
    const cents = (weight: number, service: string) =>
      Math.round(
        Number(
          rated.find((s) => s.parcel.weight === weight)?.rates.find((r) => r.service === service)?.rate,
        ) * 100,
      );
    const priority = quoted.find((q) => q.service === "Priority");
    expect(priority).toEqual({
      carrier: "USPS",
      service: "Priority",
      amount: cents(32, "Priority") + cents(10, "Priority"),
      currency: "usd",
      deliveryDays: 2,
    });
    expect(quoted).toHaveLength(rated[0]?.rates.length ?? -1);
  });

  it("answers no rates for a destination no carrier rates, and refuses to guess when EasyPost is down", async () => {
    expect(await quoter().quote({ country: "CU", postalCode: "10400" }, [{ weightOz: 16 }])).toEqual([]);
    easyPost.injectFailure("shipments.create", { kind: "server_error" }, 5);
    try {
      await expect(
        quoter().quote({ country: "US", postalCode: "10001" }, [{ weightOz: 16 }]),
      ).rejects.toBeInstanceOf(LiveRatesUnavailable);
    } finally {
      easyPost.clearFailures();
    }
  });

  it("EasyPost refusing the address (422) is no rates; a hung EasyPost is unavailable once the client's timeout fires", async () => {
    // No postal code: the stand-in, as EasyPost, refuses the shipment (PARAMETER.REQUIRED).
    expect(await quoter().quote({ country: "US" }, [{ weightOz: 16 }])).toEqual([]);
    const impatient = createEasyPostRateQuoter({
      client: lazyEasyPostClient({ apiKey: "EZTK_quotes", apiBase: easyPost.apiBase ?? "", timeoutMs: 300 }),
      warehouse,
    });
    easyPost.injectFailure("shipments.create", { kind: "hang" }, 1);
    try {
      await expect(
        impatient.quote({ country: "US", postalCode: "10001" }, [{ weightOz: 16 }]),
      ).rejects.toBeInstanceOf(LiveRatesUnavailable);
    } finally {
      easyPost.clearFailures();
    }
  });

  it("a shipment made for its rates cannot be bought: its label needs the street (the stand-in, as EasyPost)", async () => {
    const before = easyPost.shipments().length;
    await quoter().quote({ country: "US", postalCode: "10001" }, [{ weightOz: 16 }]);
    const [rating] = easyPost.shipments().slice(before);
    const client = await lazyEasyPostClient({ apiKey: "EZTK_quotes", apiBase: easyPost.apiBase ?? "" })();
    await expect(client.Shipment.buy(String(rating?.id), String(rating?.rates[0]?.id))).rejects.toMatchObject(
      {
        statusCode: 422,
        code: "SHIPMENT.POSTAGE.FAILURE",
      },
    );
    expect(easyPost.purchased().filter((s) => s.id === rating?.id)).toEqual([]);
  });
});
