import { createSandboxCarrier, sandboxTrackingNumber } from "../../src/shipping/sandbox-carrier";
import { createShipmentBooking } from "../../src/shipping/shipment-booking";
import { createShipmentRepository } from "../../src/shipping/prisma-shipment-repository";
import type { ShipmentRepository } from "../../src/shipping/shipment-repository";
import type { ShippingProvider } from "../../src/shipping/shipping-provider";
import { createTestDatabase, type TestDatabase } from "../support/database";

const lines = [{ sku: "MUG-1", quantity: 2 }];

describe("sandbox carrier", () => {
  it("gives each order one deterministic tracking number and a tracking page under PUBLIC_URL", async () => {
    const carrier = createSandboxCarrier({ publicUrl: "https://shop.example" });
    const orderId = "3f1c2a9e-7b4d-4c1e-9a2b-5d6e7f801234";

    const first = await carrier.createShipment({ orderId, lines });
    const again = await carrier.createShipment({ orderId, lines });
    const other = await carrier.createShipment({ orderId: "00000000-0000-4000-8000-000000000001", lines });

    expect(first).toEqual({
      carrier: "sandbox",
      trackingNumber: sandboxTrackingNumber(orderId),
      trackingUrl: `https://shop.example/track/${sandboxTrackingNumber(orderId)}`,
    });
    expect(first.trackingNumber).toMatch(/^SBX[0-9A-F]{16}$/);
    expect(again).toEqual(first);
    expect(other.trackingNumber).not.toBe(first.trackingNumber);
    expect(carrier.bookings().filter((b) => b.orderId === orderId)).toHaveLength(1);
    // A restarted process books the same number again.
    const restarted = createSandboxCarrier({ publicUrl: "https://shop.example/" });
    expect(await restarted.createShipment({ orderId, lines })).toEqual(first);
  });
});

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
    const trackingNumber = `${sandboxTrackingNumber(orderId)}${suffix}`;
    return {
      carrier: "sandbox",
      trackingNumber,
      trackingUrl: `https://shop.example/track/${trackingNumber}`,
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
    expect(await shipments.findByOrderId(second)).toBeNull();
  });

  it("marks a shipment delivered once and keeps the first delivery time", async () => {
    const orderId = await createOrder();
    const { trackingNumber } = await shipments.recordBooked(orderId, bookingFor(orderId));
    const at = new Date("2026-12-01T10:00:00.000Z");

    const results = await Promise.all([
      shipments.markDelivered({ trackingNumber }, at),
      shipments.markDelivered({ trackingNumber }, at),
    ]);
    const repeat = await shipments.markDelivered({ orderId }, new Date("2026-12-05T10:00:00.000Z"));

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
      await shipments.markDelivered({ orderId: "00000000-0000-4000-8000-000000000009" }, new Date()),
    ).toEqual({
      outcome: "not-found",
    });
  });

  it("books with the carrier once per order, even when the step runs twice", async () => {
    const orderId = await createOrder();
    const carrier = createSandboxCarrier({ publicUrl: "https://shop.example" });
    let calls = 0;
    const counting: ShippingProvider = {
      createShipment: (request) => {
        calls += 1;
        return carrier.createShipment(request);
      },
    };
    const booking = createShipmentBooking({ provider: counting, shipments });

    const first = await booking.book({ orderId, lines });
    const second = await booking.book({ orderId, lines });

    expect(second).toEqual(first);
    expect(calls).toBe(1);
    expect(await booking.findByOrder(orderId)).toEqual({ ...first, status: "booked", deliveredAt: null });
    expect(await booking.findByOrder("00000000-0000-4000-8000-000000000009")).toBeNull();
  });
});
