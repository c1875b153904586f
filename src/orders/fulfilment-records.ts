import type { Database, Prisma } from "../db/client";
import type { OrderStatus } from "./order-repository";
import type { CarrierBooking } from "../shipping/shipping-provider";

/**
 * Why a guarded write did not land: the order's cancellation was requested (or it left
 * `fulfilling` some other way), or a re-drive gave the order to another run.
 */
export type GuardRefusal = "cancelled" | "superseded";
export type Guarded<T> = { landed: true; value: T } | { landed: false; reason: GuardRefusal };

export interface CaptureRecord {
  orderId: string;
  claimId: string;
  runId: string;
  paymentIntentId: string;
  amountCaptured: number;
  currency: string;
  alreadyCaptured: boolean;
}

export interface ShipmentRecordInput {
  orderId: string;
  claimId: string;
  runId: string;
  /** Null for a digital-only order: nothing shipped, the order is delivered. */
  booking: CarrierBooking | null;
}

/** What the cleanup found when it fenced the order against late writes of the cancelled run. */
export type FenceOutcome = "fenced" | "shipped" | "not-found";

/**
 * The writes by which fulfilment moves an order forward. Each runs in one transaction that first
 * locks the order row and checks that the run still owns it (`claim_id`), that it is still
 * `fulfilling` and that no cancellation was requested. A cancellation sets `cancel_requested_at`
 * under the same row lock (`fenceForCancel`, or the admin API), so for every interleaving exactly
 * one of the two goes first: either the step's write lands and the cleanup, which reads after its
 * fence, undoes it; or the write is refused and the step undoes its own side effect.
 */
export interface FulfilmentRecords {
  recordCapture(capture: CaptureRecord): Promise<Guarded<{ paymentId: string }>>;
  recordShipment(input: ShipmentRecordInput): Promise<Guarded<null>>;
  fenceForCancel(orderId: string): Promise<FenceOutcome>;
}

type Tx = Prisma.TransactionClient;

const shippedStatuses: readonly OrderStatus[] = ["shipped", "delivered", "completed"];

export function createFulfilmentRecords(
  db: Database,
  options: { onTransition?: (to: OrderStatus) => void } = {},
): FulfilmentRecords {
  /**
   * `written`: the value to report when the order already shows this write landed (a retried
   * step after a crash, or the replay of a step that succeeded): statuses `landedIn`.
   */
  async function whileFulfilling<T>(
    orderId: string,
    claimId: string,
    write: (tx: Tx) => Promise<T>,
    already?: { landedIn: readonly OrderStatus[]; written: T },
  ): Promise<Guarded<T>> {
    return db.$transaction(async (tx): Promise<Guarded<T>> => {
      const [order] = await tx.$queryRaw<
        { claim_id: string | null; status: OrderStatus; cancel_requested_at: Date | null }[]
      >`SELECT claim_id, status, cancel_requested_at FROM orders WHERE id = ${orderId}::uuid FOR UPDATE`;
      if (!order || order.claim_id !== claimId) return { landed: false, reason: "superseded" };
      if (already?.landedIn.includes(order.status)) return { landed: true, value: already.written };
      if (order.cancel_requested_at !== null || order.status !== "fulfilling")
        return { landed: false, reason: "cancelled" };
      return { landed: true, value: await write(tx) };
    });
  }

  const record = (tx: Tx, orderId: string, kind: string, detail: object, runId: string) =>
    tx.orderTimelineEntry.createMany({
      data: [{ orderId, kind, detail: detail as Prisma.InputJsonValue, runId }],
      skipDuplicates: true,
    });

  return {
    recordCapture(capture) {
      const { orderId, claimId, runId, paymentIntentId, amountCaptured, currency } = capture;
      return whileFulfilling(orderId, claimId, async (tx) => {
        const data = { status: "captured" as const, amountCaptured, amountAuthorized: amountCaptured };
        const payment = await tx.payment.upsert({
          where: { orderId },
          create: { orderId, providerId: paymentIntentId, currency, ...data },
          update: data,
        });
        await record(
          tx,
          orderId,
          "payment-captured",
          { paymentIntentId, amountCaptured, currency, alreadyCaptured: capture.alreadyCaptured },
          runId,
        );
        return { paymentId: payment.id };
      });
    },

    async recordShipment({ orderId, claimId, runId, booking }) {
      let moved = false;
      const recorded = await whileFulfilling(
        orderId,
        claimId,
        async (tx) => {
          if (booking === null) {
            // Digital-only: nothing to ship, so the order is delivered once the money is taken.
            await tx.order.update({ where: { id: orderId }, data: { status: "delivered" } });
            await record(tx, orderId, "nothing-to-ship", {}, runId);
          } else {
            const { carrier, trackingNumber, trackingUrl, service, labelUrl, providerId } = booking;
            await tx.shipment.createMany({
              data: [{ orderId, carrier, trackingNumber, trackingUrl, service, labelUrl, providerId }],
              skipDuplicates: true,
            });
            await tx.order.update({ where: { id: orderId }, data: { status: "shipped" } });
            await record(tx, orderId, "shipment-booked", { carrier, trackingNumber, trackingUrl }, runId);
          }
          moved = true;
          return null;
        },
        { landedIn: shippedStatuses, written: null },
      );
      if (moved) options.onTransition?.(booking === null ? "delivered" : "shipped");
      return recorded;
    },

    async fenceForCancel(orderId) {
      return db.$transaction(async (tx): Promise<FenceOutcome> => {
        const [order] = await tx.$queryRaw<{ status: OrderStatus; shipped: boolean }[]>`
          SELECT o.status, EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id) AS shipped
          FROM orders o WHERE o.id = ${orderId}::uuid FOR UPDATE`;
        if (!order) return "not-found";
        if (order.shipped || shippedStatuses.includes(order.status)) return "shipped";
        await tx.$executeRaw`
          UPDATE orders SET cancel_requested_at = now()
          WHERE id = ${orderId}::uuid AND cancel_requested_at IS NULL`;
        return "fenced";
      });
    },
  };
}
