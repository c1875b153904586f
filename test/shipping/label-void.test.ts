import type { AlertOutbox, OutgoingAlert } from "../../src/alerts";
import { createDurableAlerter } from "../../src/alerts";
import { handBackLabels } from "../../src/inngest/steps/hand-back-labels";
import type { WorkflowDependencies } from "../../src/inngest/dependencies";
import { createLabelVoids } from "../../src/shipping/label-void";
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

/** LabelVoids over one shipment row kept in memory, with the carrier's answers queued. */
function labelVoids(answers: VoidOutcome[], row: ShipmentRecord = shipment()) {
  const { kept, alerter } = keptAlerts();
  const flagged: string[] = [];
  const published: string[] = [];
  const shipments = {
    listByOrder: async () => [row],
    recordLabelRefund: async (_id: string, status: LabelRefundStatus) => {
      const before = row.labelRefundStatus;
      row.labelRefundStatus = status;
      return before;
    },
    markLabelRefundsTracked: async () => 0,
    untrackedLabelRefunds: async () => [],
  } as unknown as ShipmentRepository;
  const voids = createLabelVoids({
    provider: {
      voidShipment: async () => answers.shift() ?? "not-voidable",
    } as unknown as Parameters<typeof createLabelVoids>[0]["provider"],
    shipments,
    timeline: { record: async () => undefined } as never,
    alerts: alerter,
    publisher: { publish: async (event: { id?: string }) => void published.push(event.id ?? "") },
    flagForOps: async (_orderId, reason) => void flagged.push(reason),
  });
  return { voids, kept, flagged, published, row };
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
