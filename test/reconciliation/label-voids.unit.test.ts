import type { Database } from "../../src/db/client";
import { labelVoidsOfDay, type LabelVoid } from "../../src/reconciliation/label-voids";
import type { ShopDay } from "../../src/reconciliation/shop-day";

/**
 * The labels a day handed back, whichever path did it (src/reconciliation/label-voids.ts), read from
 * an in-memory database that answers the three lookups as Prisma does: `where` filters only by what
 * it names, `select` returns only the fields it names, rows come in the stored order unless `orderBy`
 * says otherwise. The rows are stored out of time order, and each kept row has twins that must not
 * count (another day, another kind, a void the carrier refused, a return label gone), so a lookup
 * that asks for less, or a sort that is dropped, changes the answer.
 */

interface TimelineRow {
  orderId: string;
  kind: string;
  detail: unknown;
  createdAt: Date;
}
interface ShipmentRow {
  trackingNumber: string;
  providerId: string | null;
  labelRefundStatus: string | null;
  orderId: string;
}
interface ReturnRow {
  id: string;
  orderId: string;
  labelTrackingNumber: string | null;
  labelProviderId: string | null;
  labelRefundStatus: string | null;
}

type Where = Record<string, unknown>;

/** Prisma's `select`: only the fields set to true (all of them without a select). */
function selected<T extends object>(row: T, select: Record<string, boolean> | undefined): Partial<T> {
  if (!select) return { ...row };
  return Object.fromEntries(Object.entries(row).filter(([field]) => select[field] === true)) as Partial<T>;
}

/** Prisma's filters as label-voids.ts uses them: `in`, `not`, `gte`, `lt` and plain equality. */
function matches(row: Record<string, unknown>, where: Where | undefined): boolean {
  for (const [field, condition] of Object.entries(where ?? {})) {
    const value = row[field];
    if (condition === null || typeof condition !== "object" || condition instanceof Date) {
      if (value !== condition) return false;
      continue;
    }
    const ops = condition as { in?: unknown[]; not?: unknown; gte?: Date; lt?: Date };
    if ("in" in ops) {
      // Prisma refuses a list holding a value of another type than the field's (text and uuid here).
      if (!(ops.in ?? []).every((item) => typeof item === "string"))
        throw new Error(`Invalid value for ${field}.in: ${JSON.stringify(ops.in)}`);
      if (!(ops.in ?? []).includes(value)) return false;
    }
    if ("not" in ops && value === ops.not) return false;
    if (ops.gte !== undefined && !((value as Date) >= ops.gte)) return false;
    if (ops.lt !== undefined && !((value as Date) < ops.lt)) return false;
  }
  return true;
}

/** The three tables label-voids.ts reads, and how many rows each lookup read from them. */
function inMemory(rows: { timeline: TimelineRow[]; shipments?: ShipmentRow[]; returns?: ReturnRow[] }) {
  const rowsRead = { timeline: 0, shipments: 0, returns: 0 };
  const table =
    <T extends object>(stored: T[], counted: keyof typeof rowsRead) =>
    async (args: {
      where?: Where;
      select?: Record<string, boolean>;
      orderBy?: { createdAt?: "asc" | "desc" };
    }) => {
      let found = stored.filter((row) => matches(row as Record<string, unknown>, args.where));
      const order = args.orderBy?.createdAt;
      if (order) {
        const at = (row: T) => (row as unknown as TimelineRow).createdAt.getTime();
        found = [...found].sort((a, b) => (order === "asc" ? at(a) - at(b) : at(b) - at(a)));
      }
      rowsRead[counted] += found.length;
      return found.map((row) => selected(row, args.select));
    };
  const db = {
    orderTimelineEntry: { findMany: table(rows.timeline, "timeline") },
    shipment: { findMany: table(rows.shipments ?? [], "shipments") },
    return: { findMany: table(rows.returns ?? [], "returns") },
  } as unknown as Database;
  return Object.assign(db, { rowsRead });
}

// The day as shop-day.ts makes it, written out: building it here at load time would make a mutant
// of shop-day.ts break this file's loading rather than fail a test of its own.
const day: ShopDay = {
  date: "2026-12-05",
  timeZone: "UTC",
  start: new Date("2026-12-05T00:00:00Z"),
  end: new Date("2026-12-06T00:00:00Z"),
};
const at = (time: string) => new Date(`2026-12-05T${time}Z`);
const entry = (orderId: string, kind: string, detail: unknown, createdAt = at("12:00:00")): TimelineRow => ({
  orderId,
  kind,
  detail,
  createdAt,
});
const sorted = (voids: Map<string, LabelVoid>) =>
  [...voids.values()].sort((a, b) => a.trackingNumber.localeCompare(b.trackingNumber));

describe("labelVoidsOfDay: every label the day handed back", () => {
  it("the run's own void counts only when the carrier took the label back", async () => {
    const voids = await labelVoidsOfDay(
      inMemory({
        timeline: [
          entry("o-1", "shipment-voided", { trackingNumber: "TRK-VOIDED", outcome: "voided" }),
          entry("o-2", "shipment-voided", { trackingNumber: "TRK-ALREADY", outcome: "already-voided" }),
          entry("o-3", "shipment-voided", { trackingNumber: "TRK-REFUSED", outcome: "not-voidable" }),
          entry("o-4", "shipment-voided", { trackingNumber: "TRK-NO-OUTCOME" }),
          entry("o-5", "shipment-voided", { outcome: "voided" }),
          entry("o-6", "shipment-voided", null),
        ],
      }),
      day,
    );
    expect(sorted(voids)).toEqual([
      {
        orderId: "o-2",
        trackingNumber: "TRK-ALREADY",
        lookup: "order-o-2",
        via: "shipment-voided",
        ourStatus: null,
      },
      {
        orderId: "o-1",
        trackingNumber: "TRK-VOIDED",
        lookup: "order-o-1",
        via: "shipment-voided",
        ourStatus: null,
      },
    ]);
  });

  it("a label handed back on cancel, full refund or re-ship is asked by the carrier's id we kept", async () => {
    const db = inMemory({
      timeline: [
        entry("o-1", "label-refund-requested", { trackingNumber: "TRK-A", cause: "cancelled" }),
        entry("o-2", "label-refund-requested", { trackingNumber: "TRK-B", cause: "reshipped" }),
      ],
      shipments: [
        { trackingNumber: "TRK-A", providerId: "shp_A", labelRefundStatus: "submitted", orderId: "o-1" },
        { trackingNumber: "TRK-B", providerId: null, labelRefundStatus: "refunded", orderId: "o-2" },
        { trackingNumber: "TRK-OTHER", providerId: "shp_X", labelRefundStatus: "rejected", orderId: "o-9" },
      ],
    });
    const voids = await labelVoidsOfDay(db, day);
    // Only the shipments of the day's voids are read, not every label ever bought.
    expect(db.rowsRead.shipments).toBe(2);
    expect(sorted(voids)).toEqual([
      {
        orderId: "o-1",
        trackingNumber: "TRK-A",
        lookup: "shp_A",
        via: "label-refund-requested",
        ourStatus: "submitted",
      },
      // Recorded without the carrier's id: asked by its reference.
      {
        orderId: "o-2",
        trackingNumber: "TRK-B",
        lookup: "order-o-2",
        via: "label-refund-requested",
        ourStatus: "refunded",
      },
    ]);
  });

  it("a label voided, then its refund rejected by the carrier, is reported by the latest path with our status rejected", async () => {
    const voids = await labelVoidsOfDay(
      inMemory({
        // Stored newest first: only the sort by time makes the rejection the latest word.
        timeline: [
          entry("o-1", "label-refund-rejected", { trackingNumber: "TRK-R", why: "rejected" }, at("15:00:00")),
          entry(
            "o-1",
            "label-refund-requested",
            { trackingNumber: "TRK-R", cause: "refunded" },
            at("09:00:00"),
          ),
          entry("o-2", "label-refund-rejected", { trackingNumber: "TRK-GONE" }, at("16:00:00")),
          entry("o-2", "label-refund-requested", { trackingNumber: "TRK-GONE" }, at("10:00:00")),
          entry("o-3", "label-refund-rejected", { trackingNumber: "TRK-ASKED" }, at("08:00:00")),
          entry("o-3", "label-refund-requested", { trackingNumber: "TRK-ASKED" }, at("11:00:00")),
        ],
        shipments: [
          { trackingNumber: "TRK-R", providerId: "shp_R", labelRefundStatus: "rejected", orderId: "o-1" },
        ],
      }),
      day,
    );
    expect(sorted(voids)).toEqual([
      // Asked again after the rejection (and not recorded): the latest entry says requested.
      {
        orderId: "o-3",
        trackingNumber: "TRK-ASKED",
        lookup: "order-o-3",
        via: "label-refund-requested",
        ourStatus: null,
      },
      // Not recorded as a shipment (booked after a cancel): the rejection itself is our status.
      {
        orderId: "o-2",
        trackingNumber: "TRK-GONE",
        lookup: "order-o-2",
        via: "label-refund-rejected",
        ourStatus: "rejected",
      },
      {
        orderId: "o-1",
        trackingNumber: "TRK-R",
        lookup: "shp_R",
        via: "label-refund-rejected",
        ourStatus: "rejected",
      },
    ]);
  });

  it("an unrecorded parcel is asked by its parcel's reference; an entry naming none is parcel 1", async () => {
    const voids = await labelVoidsOfDay(
      inMemory({
        timeline: [
          entry("o-1", "shipment-voided", { trackingNumber: "TRK-P2", outcome: "voided", parcelNumber: 2 }),
          entry("o-1", "label-refund-requested", { trackingNumber: "TRK-P3", parcelNumber: 3 }),
          entry("o-1", "label-refund-requested", { trackingNumber: "TRK-P1", parcelNumber: "2" }),
        ],
      }),
      day,
    );
    expect(sorted(voids).map(({ trackingNumber, lookup }) => [trackingNumber, lookup])).toEqual([
      ["TRK-P1", "order-o-1"],
      ["TRK-P2", "order-o-1-2"],
      ["TRK-P3", "order-o-1-3"],
    ]);
  });

  it("reads only the day's entries, of the kinds that hand a label back", async () => {
    const voids = await labelVoidsOfDay(
      inMemory({
        timeline: [
          entry("o-1", "label-refund-requested", { trackingNumber: "TRK-START" }, day.start),
          entry(
            "o-1",
            "label-refund-requested",
            { trackingNumber: "TRK-LAST" },
            new Date(day.end.getTime() - 1),
          ),
          entry(
            "o-1",
            "label-refund-requested",
            { trackingNumber: "TRK-BEFORE" },
            new Date(day.start.getTime() - 1),
          ),
          entry("o-1", "label-refund-requested", { trackingNumber: "TRK-NEXT-DAY" }, day.end),
          entry("o-1", "shipment-booked", { trackingNumber: "TRK-BOOKED" }),
          entry("o-1", "label-not-voided", { trackingNumber: "TRK-SCANNED", why: "scanned" }),
        ],
      }),
      day,
    );
    expect([...voids.keys()].sort()).toEqual(["TRK-LAST", "TRK-START"]);
  });

  it("a return label handed back is asked by the carrier's id we kept, else its reference; one not found or gone is not", async () => {
    const voids = await labelVoidsOfDay(
      inMemory({
        timeline: [
          entry("o-1", "return-label-refund-requested", { returnId: "r-1", status: "submitted" }),
          entry("o-2", "return-label-refund-requested", { returnId: "r-2", status: "rejected" }),
          entry("o-3", "return-label-refund-requested", { returnId: "r-3", status: "not-found" }),
          entry("o-4", "return-label-refund-requested", { returnId: "r-4", status: "submitted" }),
          entry("o-5", "return-label-refund-requested", { status: "submitted" }),
          entry("o-7", "return-label-refund-requested", { returnId: 7, status: "submitted" }),
          // The entry's tracking number is not how a return label is found: by the return.
          entry("o-6", "return-label-refund-requested", { trackingNumber: "RET-6", status: "submitted" }),
        ],
        returns: [
          {
            id: "r-1",
            orderId: "o-1",
            labelTrackingNumber: "RET-1",
            labelProviderId: "shp_r1",
            labelRefundStatus: "submitted",
          },
          {
            id: "r-2",
            orderId: "o-2",
            labelTrackingNumber: "RET-2",
            labelProviderId: null,
            labelRefundStatus: "rejected",
          },
          {
            id: "r-3",
            orderId: "o-3",
            labelTrackingNumber: "RET-3",
            labelProviderId: "shp_r3",
            labelRefundStatus: null,
          },
          // No label on record any more: nothing to ask the carrier about.
          {
            id: "r-4",
            orderId: "o-4",
            labelTrackingNumber: null,
            labelProviderId: "shp_r4",
            labelRefundStatus: null,
          },
          {
            id: "r-9",
            orderId: "o-9",
            labelTrackingNumber: "RET-9",
            labelProviderId: "shp_r9",
            labelRefundStatus: "submitted",
          },
        ],
      }),
      day,
    );
    expect(sorted(voids)).toEqual([
      {
        orderId: "o-1",
        trackingNumber: "RET-1",
        lookup: "shp_r1",
        via: "return-label-refund-requested",
        ourStatus: "submitted",
      },
      {
        orderId: "o-2",
        trackingNumber: "RET-2",
        lookup: "return-r-2",
        via: "return-label-refund-requested",
        ourStatus: "rejected",
      },
    ]);
  });

  it("a day with nothing handed back finds nothing", async () => {
    expect((await labelVoidsOfDay(inMemory({ timeline: [] }), day)).size).toBe(0);
  });
});
