import { createHash } from "node:crypto";
import { createShipmentBooking } from "../../src/shipping/shipment-booking";
import { createShipmentRepository } from "../../src/shipping/prisma-shipment-repository";
import type { ShipmentRepository } from "../../src/shipping/shipment-repository";
import type { ShippingProvider } from "../../src/shipping/shipping-provider";
import { createTestDatabase, type TestDatabase } from "../support/database";

const lines = [{ sku: "MUG-1", quantity: 2 }];

/** A tracking number per order, as a carrier hands out (the carrier itself: test/shipping/easypost.test.ts). */
const trackingNumberOf = (orderId: string) =>
  `EZ${createHash("sha256").update(orderId).digest("hex").slice(0, 16).toUpperCase()}`;

describe("shipments", () => {
  let database: TestDatabase;
  let shipments: ShipmentRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    shipments = createShipmentRepository(database.db);
  });
  afterAll(() => database.drop());

  async function createOrder(): Promise<string> {
    const order = await database.db.order.create({
      data: { customerId: "cus_ship", email: "buyer@example.com", currency: "usd", total: 1000 },
    });
    return order.id;
  }

  function bookingFor(orderId: string, suffix = "") {
    const trackingNumber = `${trackingNumberOf(orderId)}${suffix}`;
    return {
      carrier: "USPS",
      trackingNumber,
      trackingUrl: `https://track.easypost.com/${trackingNumber}`,
    };
  }

  it("records a booking once however often, and concurrently, it is recorded", async () => {
    const orderId = await createOrder();
    const booking = bookingFor(orderId);

    const records = await Promise.all(
      Array.from({ length: 5 }, () => shipments.recordBooked(orderId, booking)),
    );
    const later = await shipments.recordBooked(orderId, bookingFor(orderId, "X"));

    for (const record of [...records, later]) {
      expect(record).toMatchObject({ orderId, ...booking, status: "booked", deliveredAt: null });
    }
    expect(await database.db.shipment.count({ where: { orderId } })).toBe(1);
  });

  it("refuses a tracking number that belongs to another order", async () => {
    const first = await createOrder();
    const second = await createOrder();
    await shipments.recordBooked(first, bookingFor(first));

    await expect(shipments.recordBooked(second, bookingFor(first))).rejects.toMatchObject({
      code: "conflict",
    });
    expect(await shipments.listByOrder(second)).toEqual([]);
  });

  it("marks a shipment delivered once and keeps the first delivery time", async () => {
    const orderId = await createOrder();
    const { trackingNumber, id: shipmentId } = await shipments.recordBooked(orderId, bookingFor(orderId));
    const at = new Date("2026-12-01T10:00:00.000Z");

    const results = await Promise.all([
      shipments.markDelivered({ trackingNumber }, at),
      shipments.markDelivered({ trackingNumber }, at),
    ]);
    const repeat = await shipments.markDelivered({ shipmentId }, new Date("2026-12-05T10:00:00.000Z"));

    expect(results.map((r) => r.outcome).sort()).toEqual(["already-delivered", "delivered"]);
    expect(repeat).toEqual({
      outcome: "already-delivered",
      shipment: expect.objectContaining({ status: "delivered", deliveredAt: at }),
    });
    expect(await shipments.findByTrackingNumber(trackingNumber)).toMatchObject({
      status: "delivered",
      deliveredAt: at,
    });
  });

  it("reports an unknown shipment", async () => {
    expect(await shipments.markDelivered({ trackingNumber: "SBXNOPE" }, new Date())).toEqual({
      outcome: "not-found",
    });
    expect(
      await shipments.markDelivered({ shipmentId: "00000000-0000-4000-8000-000000000009" }, new Date()),
    ).toEqual({
      outcome: "not-found",
    });
  });

  it("books with the carrier once per order, even when the step runs twice", async () => {
    const orderId = await createOrder();
    let calls = 0;
    const counting: ShippingProvider = {
      createShipment: async (request) => {
        calls += 1;
        return bookingFor(request.orderId);
      },
    };
    const booking = createShipmentBooking({ provider: counting, shipments });

    const first = await booking.book({ orderId, lines });
    const second = await booking.book({ orderId, lines });

    expect(second).toEqual(first);
    expect(calls).toBe(1);
    expect(await booking.findByOrder(orderId)).toEqual(
      (first ?? []).map((parcel) => ({ ...parcel, status: "booked", deliveredAt: null })),
    );
    expect(await booking.findByOrder("00000000-0000-4000-8000-000000000009")).toEqual([]);
  });
});
