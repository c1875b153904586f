import { planParcels } from "../../src/shipping/parcel-plan";

describe("planParcels: an order's lines into parcels", () => {
  const limits = { itemWeightOz: 16, maxWeightOz: 40 };

  it("without a limit or a product that ships alone: one parcel, parcel 1, as before several parcels", () => {
    expect(
      planParcels(
        [
          { sku: "B", quantity: 2, weightOz: 30 },
          { sku: "A", quantity: 1 },
        ],
        { itemWeightOz: 16 },
      ),
    ).toEqual([
      {
        parcelNumber: 1,
        lines: [
          { sku: "A", quantity: 1, weightOz: null },
          { sku: "B", quantity: 2, weightOz: 30 },
        ],
        weightOz: 76,
      },
    ]);
  });

  it("packs under the maximum weight, heaviest first; a product that ships alone gets a parcel per unit, after the packed ones", () => {
    const plan = planParcels(
      [
        { sku: "MUG", quantity: 4, weightOz: 12 },
        { sku: "BIKE", quantity: 2, weightOz: 480, shipsAlone: true },
        { sku: "TEE", quantity: 1 },
      ],
      limits,
    );
    expect(
      plan.map((p) => [p.parcelNumber, p.lines.map((l) => `${l.quantity}x${l.sku}`), p.weightOz]),
    ).toEqual([
      [1, ["2xMUG", "1xTEE"], 40],
      [2, ["2xMUG"], 24],
      [3, ["1xBIKE"], 480],
      [4, ["1xBIKE"], 480],
    ]);
    for (const parcel of plan.filter((p) => !p.lines.some((l) => l.sku === "BIKE")))
      expect(parcel.weightOz).toBeLessThanOrEqual(limits.maxWeightOz);
  });

  it("a unit heavier than the limit goes alone rather than failing", () => {
    expect(
      planParcels([{ sku: "ANVIL", quantity: 2, weightOz: 100 }], limits).map((p) => p.weightOz),
    ).toEqual([100, 100]);
  });

  it("is deterministic: the lines' order changes nothing, so a retry books the same parcels", () => {
    const lines = [
      { sku: "C", quantity: 3, weightOz: 15 },
      { sku: "A", quantity: 2, weightOz: 15 },
      { sku: "B", quantity: 1, weightOz: 25, shipsAlone: true },
      { sku: "D", quantity: 2 },
    ];
    const first = planParcels(lines, limits);
    // Every rotation and its reverse: the plan is a function of the lines, not of their order.
    for (let shift = 0; shift < lines.length; shift++) {
      const rotated = [...lines.slice(shift), ...lines.slice(0, shift)];
      expect(planParcels(rotated, limits)).toEqual(first);
      expect(planParcels([...rotated].reverse(), limits)).toEqual(first);
    }
    expect(first.map((p) => p.parcelNumber)).toEqual(first.map((_, index) => index + 1));
    expect(planParcels([], limits)).toEqual([]);
  });
});
