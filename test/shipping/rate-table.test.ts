import {
  priceRate,
  quoteShipping,
  rateTableSchema,
  zoneFor,
  type RateTable,
} from "../../src/shipping/rate-table";

const table: RateTable = rateTableSchema.parse({
  currency: "usd",
  zones: [
    {
      name: "US mainland",
      destinations: [{ country: "US" }],
      rates: [
        {
          id: "ground",
          displayName: "Ground",
          pricing: {
            type: "weight_band",
            bands: [
              { upToOz: 16, amount: 599 },
              { upToOz: 80, amount: 999 },
            ],
          },
          freeOverAmount: 7500,
          deliveryEstimate: {
            minimum: { unit: "business_day", value: 3 },
            maximum: { unit: "business_day", value: 5 },
          },
        },
        { id: "express", displayName: "Express", pricing: { type: "flat", amount: 2500 } },
      ],
    },
    {
      name: "Alaska and Hawaii",
      destinations: [{ country: "US", regions: ["AK", "HI"] }],
      rates: [{ id: "ground", displayName: "Ground (AK/HI)", pricing: { type: "flat", amount: 1999 } }],
    },
    {
      name: "Manhattan courier",
      destinations: [{ country: "US", regions: ["NY"], postalPrefixes: ["100", "101"] }],
      rates: [{ id: "courier", displayName: "Same-day courier", pricing: { type: "flat", amount: 1200 } }],
    },
    {
      name: "Canada",
      destinations: [{ country: "CA" }],
      rates: [{ id: "intl", displayName: "International", pricing: { type: "flat", amount: 1800 } }],
    },
  ],
});

const order = (subtotal: number, ...parcelWeightsOz: number[]) => ({ subtotal, parcelWeightsOz });

describe("shipping rate table", () => {
  describe("zoneFor", () => {
    it("takes the most specific zone: postal prefix over region over country", () => {
      expect(zoneFor(table, { country: "US", region: "CA", postalCode: "94103" })?.name).toBe("US mainland");
      expect(zoneFor(table, { country: "us", region: "hi" })?.name).toBe("Alaska and Hawaii");
      expect(zoneFor(table, { country: "US", region: "NY", postalCode: "10001" })?.name).toBe(
        "Manhattan courier",
      );
      expect(zoneFor(table, { country: "US", region: "NY", postalCode: "14201" })?.name).toBe("US mainland");
    });

    it("covers nothing outside its destinations", () => {
      expect(zoneFor(table, { country: "FR" })).toBeNull();
    });
  });

  describe("priceRate", () => {
    const ground = table.zones[0]?.rates[0];
    if (!ground) throw new Error("fixture table has no ground rate");

    it("prices each parcel by its band and adds them up", () => {
      expect(priceRate(ground, order(3000, 10))).toBe(599);
      expect(priceRate(ground, order(3000, 16))).toBe(599);
      expect(priceRate(ground, order(3000, 16.5, 10))).toBe(999 + 599);
    });

    it("has no price for a parcel heavier than every band", () => {
      expect(priceRate(ground, order(3000, 81))).toBeNull();
    });

    it("is free once the order reaches the free-over amount, whatever it weighs", () => {
      expect(priceRate(ground, order(7499, 10))).toBe(599);
      expect(priceRate(ground, order(7500, 10))).toBe(0);
      expect(priceRate(ground, order(9000, 200))).toBe(0);
    });
  });

  describe("quoteShipping", () => {
    it("offers the zone's rates in the table's order, with their delivery estimates", () => {
      expect(quoteShipping(table, { country: "US", region: "CA" }, order(3000, 20))).toEqual([
        {
          rateId: "ground",
          zone: "US mainland",
          displayName: "Ground",
          amount: 999,
          currency: "usd",
          deliveryEstimate: {
            minimum: { unit: "business_day", value: 3 },
            maximum: { unit: "business_day", value: 5 },
          },
        },
        {
          rateId: "express",
          zone: "US mainland",
          displayName: "Express",
          amount: 2500,
          currency: "usd",
          deliveryEstimate: null,
        },
      ]);
    });

    it("leaves out a rate with no price for the order", () => {
      expect(quoteShipping(table, { country: "US" }, order(3000, 100)).map((q) => q.rateId)).toEqual([
        "express",
      ]);
    });

    it("offers nothing where the table does not cover the destination", () => {
      expect(quoteShipping(table, { country: "FR", postalCode: "75001" }, order(3000, 10))).toEqual([]);
    });
  });

  describe("rateTableSchema", () => {
    const valid = {
      currency: "usd",
      zones: [
        {
          name: "US",
          destinations: [{ country: "US" }],
          rates: [{ id: "std", displayName: "Std", pricing: { type: "flat", amount: 500 } }],
        },
      ],
    };

    it("accepts a well-formed table", () => {
      expect(rateTableSchema.safeParse(valid).success).toBe(true);
    });

    it.each([
      [
        "a lowercase country",
        { ...valid, zones: [{ ...valid.zones[0], destinations: [{ country: "us" }] }] },
      ],
      ["an upper-case currency", { ...valid, currency: "USD" }],
      [
        "a negative amount",
        {
          ...valid,
          zones: [
            {
              ...valid.zones[0],
              rates: [{ id: "std", displayName: "Std", pricing: { type: "flat", amount: -1 } }],
            },
          ],
        },
      ],
      [
        "a fractional amount",
        {
          ...valid,
          zones: [
            {
              ...valid.zones[0],
              rates: [{ id: "std", displayName: "Std", pricing: { type: "flat", amount: 4.5 } }],
            },
          ],
        },
      ],
      [
        "bands out of order",
        {
          ...valid,
          zones: [
            {
              ...valid.zones[0],
              rates: [
                {
                  id: "std",
                  displayName: "Std",
                  pricing: {
                    type: "weight_band",
                    bands: [
                      { upToOz: 32, amount: 900 },
                      { upToOz: 16, amount: 500 },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
      [
        "a rate id twice in a zone",
        {
          ...valid,
          zones: [
            {
              ...valid.zones[0],
              rates: [
                { id: "std", displayName: "A", pricing: { type: "flat", amount: 1 } },
                { id: "std", displayName: "B", pricing: { type: "flat", amount: 2 } },
              ],
            },
          ],
        },
      ],
      ["an unknown field", { ...valid, zones: [{ ...valid.zones[0], surcharge: 100 }] }],
      ["no zones", { ...valid, zones: [] }],
    ])("refuses %s", (_label, candidate) => {
      expect(rateTableSchema.safeParse(candidate).success).toBe(false);
    });
  });
});
