import type { AlertOutbox, OutgoingAlert } from "../../src/alerts";
import { createDurableAlerter } from "../../src/alerts";
import { handBackLabels } from "../../src/inngest/steps/hand-back-labels";
import type { WorkflowDependencies } from "../../src/inngest/dependencies";
import { createLabelVoids, parcelEntryRunId } from "../../src/shipping/label-void";
import type { ShipmentRecord, ShipmentRepository } from "../../src/shipping/shipment-repository";
import type { LabelRefundStatus, VoidOutcome } from "../../src/shipping/shipping-provider";

/**
 * The alerts about labels the carrier will not take back, through the durable alerter (one alert
 * per key, as its outbox keeps them): keyed by the label's tracking number, so a retry, or the
 * other run that hands the same label back, tells ops once.
 */
function keptAlerts() {
  const kept = new Map<string, OutgoingAlert>();
  const outbox = {
    enqueue: async (alert: OutgoingAlert) => {
      if (!kept.has(alert.key)) kept.set(alert.key, alert);
    },
  } as unknown as AlertOutbox;
  return { kept, alerter: createDurableAlerter({ outbox, runUrlTemplate: "https://inngest.test/{runId}" }) };
}

const label = {
  carrier: "USPS",
  trackingNumber: "9400TRK1",
  trackingUrl: "https://track.test/9400TRK1",
};

function shipment(overrides: Partial<ShipmentRecord> = {}): ShipmentRecord {
  return {
    id: "shp-row-1",
    orderId: "order-1",
    parcelNumber: 1,
    generation: 0,
    lines: [],
    supersededAt: null,
    carrier: label.carrier,
    trackingNumber: label.trackingNumber,
    trackingUrl: label.trackingUrl,
    service: "Priority",
    labelUrl: null,
    providerId: "shp_1",
    trackerStatus: "pre_transit",
    labelRefundStatus: null,
    status: "booked",
    deliveredAt: null,
    ...overrides,
  };
}

/** LabelVoids over shipment rows kept in memory, with the carrier's answers queued. */
function labelVoids(
  answers: VoidOutcome[],
  rows: ShipmentRecord | ShipmentRecord[] = shipment(),
  refundAnswers: (LabelRefundStatus | null | (() => LabelRefundStatus))[] = [],
) {
  const all = Array.isArray(rows) ? rows : [rows];
  const row = all[0] as ShipmentRecord;
  const { kept, alerter } = keptAlerts();
  const flagged: string[] = [];
  const published: string[] = [];
  const entries: { kind: string; detail: unknown; runId: string | undefined }[] = [];
  const voidCalls: string[] = [];
  const voidParcels: unknown[] = [];
  const marked: string[] = [];
  const shipments = {
    listByOrder: async (orderId: string) => all.filter((r) => r.orderId === orderId),
    recordLabelRefund: async (id: string, status: LabelRefundStatus) => {
      const target = all.find((r) => r.id === id) as ShipmentRecord;
      const before = target.labelRefundStatus;
      target.labelRefundStatus = status;
      return before;
    },
    markLabelRefundsTracked: async (orderId: string) => {
      marked.push(orderId);
      return 1;
    },
    untrackedLabelRefunds: async () => all.filter((r) => r.labelRefundStatus === "submitted"),
  } as unknown as ShipmentRepository;
  const voids = createLabelVoids({
    provider: {
      voidShipment: async (_orderId: string, trackingNumber: string, parcel?: unknown) => {
        voidCalls.push(trackingNumber);
        voidParcels.push(parcel);
        return answers.shift() ?? "not-voidable";
      },
      labelRefundStatus: async () => {
        const answer = refundAnswers.shift() ?? null;
        return typeof answer === "function" ? answer() : answer;
      },
    } as unknown as Parameters<typeof createLabelVoids>[0]["provider"],
    shipments,
    timeline: {
      record: async (_orderId: string, kind: string, detail: unknown, runId?: string) => {
        entries.push({ kind, detail, runId });
      },
    } as never,
    alerts: alerter,
    publisher: { publish: async (event: { id?: string }) => void published.push(event.id ?? "") },
    flagForOps: async (_orderId, reason) => void flagged.push(reason),
  });
  const kinds = () => entries.map((entry) => entry.kind);
  return { voids, kept, flagged, published, row, entries, kinds, voidCalls, voidParcels, marked };
}

describe("label not voidable: one alert per label, keyed by its tracking number", () => {
  it("the booking step and then the cancel's cleanup handing back the same label tell ops once", async () => {
    const { kept, alerter } = keptAlerts();
    const flagged: string[] = [];
    const deps = {
      shipments: { voidWithCarrier: async () => "not-voidable" as const },
      timeline: { record: async () => undefined },
      orders: { flagForOps: async (_orderId: string, reason: string) => void flagged.push(reason) },
      alerts: alerter,
    } as unknown as Pick<WorkflowDependencies, "shipments" | "timeline" | "orders" | "alerts">;
    const handBack = (runId: string) =>
      handBackLabels(deps, {
        orderId: "order-1",
        runId,
        parcels: [label],
        entryKey: (parcel) => `${runId}/${parcel.trackingNumber}`,
        flagReason: "a label bought for a cancelled order could not be handed back",
      });

    expect(await handBack("run-booking")).toBe(0);
    expect(await handBack("run-booking")).toBe(0); // the step retried
    expect(await handBack("run-cleanup")).toBe(0); // the cleanup's run, the same label

    expect([...kept.keys()]).toEqual([`notice-label-not-voidable-${label.trackingNumber}`]);
    expect(flagged).toHaveLength(3);
  });

  it("a label never recorded, handed back again on a retry that gets another answer, is said once", async () => {
    const { voids, kept } = labelVoids(["not-found", "not-voidable"]);
    const unrecorded = { orderId: "order-1", ...label, parcelNumber: 1, generation: 0 };

    expect(await voids.handBackUnrecorded(unrecorded, "cancelled", "entry-1")).toBe("needs-ops");
    expect(await voids.handBackUnrecorded(unrecorded, "cancelled", "entry-1")).toBe("needs-ops");

    expect([...kept.keys()]).toEqual([`notice-label-not-voidable-${label.trackingNumber}`]);
  });

  it("a recorded label the carrier will not void, asked again on a retry, is said once", async () => {
    const { voids, kept, flagged } = labelVoids(["not-voidable", "not-found"]);

    expect(await voids.voidLabel("order-1", "cancelled", "run-1")).toEqual({
      outcome: "needs-ops",
      why: "not-voidable",
    });
    expect(await voids.voidLabel("order-1", "cancelled", "run-1")).toEqual({
      outcome: "needs-ops",
      why: "not-voidable",
    });

    expect([...kept.keys()]).toEqual([`notice-label-not-voidable-${label.trackingNumber}`]);
    expect(flagged).toHaveLength(2);
  });
});

describe("LabelVoids: handing labels back", () => {
  it("an order with no label: nothing asked", async () => {
    const { voids, voidCalls } = labelVoids([], []);
    expect(await voids.voidLabel("order-1", "cancelled")).toEqual({ outcome: "no-label" });
    expect(voidCalls).toEqual([]);
  });

  it("a refund the carrier accepted for later: recorded submitted, on the timeline, its tracking started once", async () => {
    const { voids, row, published, kinds, entries, kept } = labelVoids(["submitted"]);
    expect(await voids.voidLabel("order-1", "cancelled", "run-1")).toEqual({
      outcome: "requested",
      status: "submitted",
    });
    expect(row.labelRefundStatus).toBe("submitted");
    expect(kinds()).toEqual(["label-refund-requested"]);
    expect(entries[0]).toMatchObject({
      runId: "run-1",
      detail: {
        cause: "cancelled",
        status: "submitted",
        trackingNumber: label.trackingNumber,
        parcelNumber: 1,
      },
    });
    expect(published).toEqual(["label-refund-requested-order-1"]);
    expect(kept.size).toBe(0);

    // Asked again (a retried step): the recorded status is the answer, the carrier is not asked.
    expect(await voids.voidLabel("order-1", "cancelled", "run-1")).toEqual({
      outcome: "requested",
      status: "submitted",
    });
    expect(published).toHaveLength(1);
  });

  it("a re-shipped parcel's old label is followed by a run of its own (its shipment id in the event id)", async () => {
    const { voids, published } = labelVoids(["submitted"]);
    await voids.voidShipment(shipment(), "reshipped", "run-1");
    expect(published).toEqual(["label-refund-requested-order-1-shp-row-1"]);
  });

  it("a carrier that voids at once: refunded, both entries, nothing to follow", async () => {
    for (const answer of ["voided", "already-voided", "refunded"] as const) {
      const { voids, kinds, published, row } = labelVoids([answer]);
      expect(await voids.voidLabel("order-1", "refunded")).toEqual({
        outcome: "requested",
        status: "refunded",
      });
      expect(row.labelRefundStatus).toBe("refunded");
      expect(kinds()).toEqual(["label-refund-requested", "label-refunded"]);
      expect(published).toEqual([]);
    }
  });

  it("billed on scan: not_applicable, nothing to refund or follow", async () => {
    const { voids, kinds, published } = labelVoids(["not_applicable"]);
    expect(await voids.voidLabel("order-1", "cancelled")).toEqual({
      outcome: "requested",
      status: "not_applicable",
    });
    expect(kinds()).toEqual(["label-refund-requested"]);
    expect(published).toEqual([]);
  });

  it("a refused refund is recorded rejected and goes to ops, flagged, once", async () => {
    const { voids, row, kinds, flagged, kept } = labelVoids(["rejected"]);
    expect(await voids.voidLabel("order-1", "cancelled", "run-1")).toEqual({
      outcome: "needs-ops",
      why: "rejected",
    });
    expect(row.labelRefundStatus).toBe("rejected");
    expect(kinds()).toEqual(["label-refund-rejected"]);
    expect(flagged).toEqual(["the carrier refused to refund the label of a cancelled order"]);
    expect([...kept.keys()]).toEqual([`notice-label-rejected-${label.trackingNumber}`]);
  });

  it("a scanned or delivered parcel: the carrier is not asked, ops are told to stop it", async () => {
    for (const scanned of [shipment({ trackerStatus: "in_transit" }), shipment({ status: "delivered" })]) {
      const { voids, voidCalls, kinds, flagged, kept } = labelVoids(["submitted"], scanned);
      expect(await voids.voidLabel("order-1", "refunded", "run-1")).toEqual({
        outcome: "needs-ops",
        why: "scanned",
      });
      expect(voidCalls).toEqual([]);
      expect(kinds()).toEqual(["label-not-voided"]);
      expect(flagged).toEqual(["refunded after the carrier scanned the parcel"]);
      expect([...kept.keys()]).toEqual([`notice-label-scanned-${label.trackingNumber}`]);
      expect(JSON.stringify([...kept.values()][0])).toContain("intercept the parcel");
    }
  });

  it("several parcels: submitted while any is, else refunded, else not_applicable; needs-ops if any does", async () => {
    const two = () => [
      shipment(),
      shipment({ id: "shp-row-2", trackingNumber: "9400TRK2", parcelNumber: 2 }),
    ];
    const outcome = async (answers: VoidOutcome[]) =>
      labelVoids(answers, two()).voids.voidLabel("order-1", "cancelled");
    expect(await outcome(["refunded", "submitted"])).toEqual({ outcome: "requested", status: "submitted" });
    expect(await outcome(["not_applicable", "refunded"])).toEqual({
      outcome: "requested",
      status: "refunded",
    });
    expect(await outcome(["not_applicable", "not_applicable"])).toEqual({
      outcome: "requested",
      status: "not_applicable",
    });
    expect(await outcome(["submitted", "not-voidable"])).toEqual({
      outcome: "needs-ops",
      why: "not-voidable",
    });
  });

  it("parcel 1's first label keeps the run's id on the timeline; later parcels and labels get their own", async () => {
    expect(parcelEntryRunId("run-1", shipment())).toBe("run-1");
    expect(parcelEntryRunId("run-1", shipment({ parcelNumber: 2 }))).toBe("run-1/parcel-2-0");
    expect(parcelEntryRunId("run-1", shipment({ generation: 1 }))).toBe("run-1/parcel-1-1");
    expect(parcelEntryRunId(undefined, shipment({ parcelNumber: 2 }))).toBeUndefined();
  });

  it("voidable: every current parcel booked, unscanned and not handed back", async () => {
    const voidable = (rows: ShipmentRecord[]) => labelVoids([], rows).voids.voidable("order-1");
    expect(await voidable([])).toBe(false);
    expect(await voidable([shipment()])).toBe(true);
    expect(
      await voidable([shipment({ trackerStatus: null }), shipment({ id: "b", trackerStatus: "unknown" })]),
    ).toBe(true);
    expect(await voidable([shipment(), shipment({ id: "b", trackerStatus: "in_transit" })])).toBe(false);
    expect(await voidable([shipment({ labelRefundStatus: "submitted" })])).toBe(false);
    expect(await voidable([shipment({ status: "delivered" })])).toBe(false);
    // A superseded label is not a current parcel.
    expect(await voidable([shipment({ supersededAt: new Date() }), shipment({ id: "b" })])).toBe(true);
  });

  it("handBackUnrecorded: a label the carrier takes back is on the timeline, ops not told", async () => {
    for (const answer of ["voided", "already-voided", "submitted", "refunded", "not_applicable"] as const) {
      const { voids, entries, kept, flagged } = labelVoids([answer]);
      const unrecorded = { orderId: "order-1", ...label, parcelNumber: 1, generation: 0 };
      expect(await voids.handBackUnrecorded(unrecorded, "cancelled", "entry-1")).toBe("requested");
      expect(entries).toEqual([
        {
          kind: "shipment-voided",
          runId: "entry-1",
          detail: expect.objectContaining({ trackingNumber: label.trackingNumber, outcome: answer }),
        },
      ]);
      expect(kept.size).toBe(0);
      expect(flagged).toEqual([]);
    }
  });
});

describe("LabelVoids: following a submitted refund", () => {
  it("nothing handed back: null, the carrier not asked", async () => {
    const { voids } = labelVoids([], shipment());
    expect(await voids.checkRefund("order-1")).toBeNull();
  });

  it("refunded by the carrier: recorded, on the timeline once, however often it is asked", async () => {
    const { voids, row, kinds, marked } = labelVoids([], shipment({ labelRefundStatus: "submitted" }), [
      null,
      "submitted",
      "refunded",
    ]);
    expect(await voids.checkRefund("order-1", "run-1")).toBe("submitted");
    expect(await voids.checkRefund("order-1", "run-1")).toBe("submitted");
    expect(await voids.checkRefund("order-1", "run-1")).toBe("refunded");
    expect(row.labelRefundStatus).toBe("refunded");
    expect(await voids.checkRefund("order-1", "run-1")).toBe("refunded");
    expect(kinds()).toEqual(["label-refunded"]);
    // Every look marks the order's labels as followed (the sweep leaves them alone).
    expect(marked).toHaveLength(4);
  });

  it("rejected by the carrier: ops told, as a re-ship's when the label was superseded", async () => {
    const { voids, kinds, flagged, kept } = labelVoids(
      [],
      shipment({ labelRefundStatus: "submitted", supersededAt: new Date() }),
      ["rejected"],
    );
    expect(await voids.checkRefund("order-1", "run-1")).toBe("rejected");
    expect(kinds()).toEqual(["label-refund-rejected"]);
    expect(flagged).toEqual(["the carrier refused to refund the label of a re-shipped parcel"]);
    expect([...kept.keys()]).toEqual([`notice-label-rejected-${label.trackingNumber}`]);
  });

  it("several labels: submitted while any is undecided, rejected if any was", async () => {
    const rows = [
      shipment({ labelRefundStatus: "refunded" }),
      shipment({ id: "b", trackingNumber: "9400TRK2", labelRefundStatus: "submitted" }),
    ];
    const { voids } = labelVoids([], rows, ["submitted", "rejected"]);
    expect(await voids.checkRefund("order-1")).toBe("submitted");
    expect(await voids.checkRefund("order-1")).toBe("rejected");
  });

  it("untrackedRefunds: each lost label with the event its publish would have sent", async () => {
    const rows = [
      shipment({ labelRefundStatus: "submitted" }),
      shipment({
        id: "old",
        trackingNumber: "9400OLD",
        labelRefundStatus: "submitted",
        supersededAt: new Date(),
      }),
    ];
    const { voids, marked } = labelVoids([], rows);
    const untracked = await voids.untrackedRefunds(new Date(), 10);
    expect(untracked.map(({ trackingNumber, event }) => [trackingNumber, event.id])).toEqual([
      [label.trackingNumber, "label-refund-requested-order-1"],
      ["9400OLD", "label-refund-requested-order-1-old"],
    ]);
    expect(untracked[0]?.event).toMatchObject({
      name: "shop/label.refund-requested",
      data: { orderId: "order-1" },
    });
    expect(await voids.trackingStarted("order-1")).toBe(1);
    expect(marked).toEqual(["order-1"]);
  });
});

describe("LabelVoids: what ops and the timeline are told", () => {
  const alertOf = (kept: Map<string, OutgoingAlert>) => JSON.stringify([...kept.values()][0]);

  it("a scanned parcel of a cancelled order: the entry and the alert name the label and what to do", async () => {
    const { voids, entries, kept } = labelVoids([], shipment({ trackerStatus: "in_transit" }));
    await voids.voidLabel("order-1", "cancelled", "run-1");
    expect(entries).toEqual([
      {
        kind: "label-not-voided",
        runId: "run-1",
        detail: {
          cause: "cancelled",
          why: "scanned",
          trackingNumber: label.trackingNumber,
          trackerStatus: "in_transit",
          parcelNumber: 1,
        },
      },
    ]);
    const alert = alertOf(kept);
    expect(alert).toContain("Parcel cancelled after it was scanned");
    expect(alert).toContain("order-1");
    expect(alert).toContain("in_transit");
    expect(alert).toContain("the label cannot be refunded");
  });

  it("a re-shipped parcel's label the carrier refuses: said as a parcel's, with claim-by-hand advice", async () => {
    const { voids, flagged, kept } = labelVoids(["rejected"], shipment({ trackerStatus: null }));
    await voids.voidShipment(shipment({ trackerStatus: null }), "reshipped", "run-1");
    expect(flagged).toEqual(["the carrier refused to refund the label of a re-shipped parcel"]);
    const alert = alertOf(kept);
    expect(alert).toContain("Label refund refused for a re-shipped parcel");
    expect(alert).toContain("claim the label refund by hand");
    // No tracker status yet: said as unknown.
    expect(alert).toContain("unknown");
  });

  it("a label already refunded or billed on scan is not asked again", async () => {
    for (const status of ["refunded", "not_applicable"] as const) {
      const { voids, voidCalls } = labelVoids(["rejected"], shipment({ labelRefundStatus: status }));
      expect(await voids.voidLabel("order-1", "cancelled")).toEqual({ outcome: "requested", status });
      expect(voidCalls).toEqual([]);
    }
  });

  it("a label voided at once: its label-refunded entry names it", async () => {
    const { voids, entries } = labelVoids(["voided"], shipment({ parcelNumber: 2 }));
    await voids.voidLabel("order-1", "cancelled", "run-1");
    expect(entries[1]).toEqual({
      kind: "label-refunded",
      runId: "run-1/parcel-2-0",
      detail: { trackingNumber: label.trackingNumber, parcelNumber: 2 },
    });
  });

  it("handBackUnrecorded: the carrier asked for the label's own parcel; a refused one flagged and told", async () => {
    const { voids, flagged, kept, voidParcels } = labelVoids(["not-found"]);
    const unrecorded = { orderId: "order-1", ...label, parcelNumber: 2, generation: 1 };
    expect(await voids.handBackUnrecorded(unrecorded, "reshipped", "entry-1")).toBe("needs-ops");
    expect(voidParcels).toEqual([{ parcelNumber: 2, generation: 1 }]);
    expect(flagged).toEqual(["a label bought for a re-shipped order could not be handed back"]);
    const alert = alertOf(kept);
    expect(alert).toContain("Label bought for an order that no longer wants it");
    expect(alert).toContain("not-found");
    expect(alert).toContain("Stop the parcel with the carrier");
  });

  it("following: a refund another run recorded first is not said twice; the entry names the label", async () => {
    const row = shipment({ labelRefundStatus: "submitted", parcelNumber: 3 });
    const { voids, entries } = labelVoids([], row, ["refunded"]);
    expect(await voids.checkRefund("order-1", "run-1")).toBe("refunded");
    expect(entries).toEqual([
      {
        kind: "label-refunded",
        runId: "run-1/parcel-3-0",
        detail: { trackingNumber: label.trackingNumber, parcelNumber: 3 },
      },
    ]);

    // Another run recorded the change while this one asked the carrier: said by that run only.
    const raced = shipment({ labelRefundStatus: "submitted" });
    const other = labelVoids([], raced, [
      () => {
        raced.labelRefundStatus = "refunded";
        return "refunded";
      },
    ]);
    expect(await other.voids.checkRefund("order-1", "run-2")).toBe("refunded");
    expect(other.entries).toEqual([]);
  });

  it("following: a refund still submitted (or not answered) stays submitted; a cancelled order's rejection is said as an order's", async () => {
    const { voids, kinds } = labelVoids([], shipment({ labelRefundStatus: "submitted" }), ["submitted"]);
    expect(await voids.checkRefund("order-1")).toBe("submitted");
    expect(kinds()).toEqual([]);

    const rejected = labelVoids([], shipment({ labelRefundStatus: "submitted" }), ["rejected"]);
    expect(await rejected.voids.checkRefund("order-1")).toBe("rejected");
    expect(rejected.flagged).toEqual(["the carrier refused to refund the label of a cancelled order"]);
  });
});
