/** A line as the split sees it: the catalog's unit weight and whether the product ships alone. */
export interface PlanLine {
  sku: string;
  quantity: number;
  weightOz?: number | null;
  shipsAlone?: boolean;
}

export interface PlannedParcel {
  /** 1, 2, ...: with the order id, the parcel's idempotency key (its carrier reference). */
  parcelNumber: number;
  lines: { sku: string; quantity: number; weightOz: number | null }[];
  weightOz: number;
}

/**
 * Splits an order's lines into parcels, deterministically: the same lines and catalog give the
 * same parcels in the same order on every retry and replay (nothing depends on the lines' order,
 * a clock or randomness), because a parcel's number is its idempotency key at the carrier.
 *
 * - Each unit of a product that ships alone is a parcel of its own.
 * - The rest is packed first-fit by weight (heaviest unit first, ties by SKU) under
 *   `maxWeightOz`; a unit heavier than the limit goes alone. No limit: all of it in one parcel.
 *
 * The packed parcels come first, so an order without a split is parcel 1 exactly as before.
 * First-fit decreasing is within 11/9 of the fewest parcels; fewer labels are not worth a
 * solver here.
 */
export function planParcels(
  lines: readonly PlanLine[],
  options: { itemWeightOz: number; maxWeightOz?: number | undefined },
): PlannedParcel[] {
  const weightOf = (line: PlanLine) => line.weightOz ?? options.itemWeightOz;
  const bySku = [...lines].filter((line) => line.quantity > 0).sort((a, b) => compare(a.sku, b.sku));

  const packed: { units: PlanLine[]; weightOz: number }[] = [];
  const units = bySku
    .filter((line) => !line.shipsAlone)
    .flatMap((line) => Array.from({ length: line.quantity }, () => line))
    .sort((a, b) => weightOf(b) - weightOf(a) || compare(a.sku, b.sku));
  for (const unit of units) {
    const weight = weightOf(unit);
    const max = options.maxWeightOz;
    const fits = packed.find((parcel) => max === undefined || parcel.weightOz + weight <= max);
    if (fits) {
      fits.units.push(unit);
      fits.weightOz += weight;
    } else {
      packed.push({ units: [unit], weightOz: weight });
    }
  }
  const alone = bySku
    .filter((line) => line.shipsAlone)
    .flatMap((line) =>
      Array.from({ length: line.quantity }, () => ({ units: [line], weightOz: weightOf(line) })),
    );

  return [...packed, ...alone].map((parcel, index) => ({
    parcelNumber: index + 1,
    lines: mergeUnits(parcel.units),
    weightOz: parcel.weightOz,
  }));
}

function mergeUnits(units: readonly PlanLine[]): PlannedParcel["lines"] {
  const merged = new Map<string, PlannedParcel["lines"][number]>();
  for (const unit of units) {
    const line = merged.get(unit.sku);
    if (line) line.quantity += 1;
    else merged.set(unit.sku, { sku: unit.sku, quantity: 1, weightOz: unit.weightOz ?? null });
  }
  return [...merged.values()].sort((a, b) => compare(a.sku, b.sku));
}

/** Code-unit order, not the locale's: the split must not depend on the machine it runs on. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
