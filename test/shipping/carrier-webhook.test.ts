import request from "supertest";
import type { Express } from "express";
import { buildApp } from "../../src/app";
import { createDatabaseReadiness } from "../../src/health/readiness";
import { createLogger } from "../../src/logger";
import { easyPostWebhookSignature } from "../../src/dev/easypost-sandbox";
import { carrierSignature } from "../../src/shipping/carrier-signature";
import type { ShipmentDeliveredEvent } from "../../src/events/contracts";
import { carrierWebhookRouter } from "../../src/shipping/carrier-webhook";
import { createShipmentRepository } from "../../src/shipping/prisma-shipment-repository";
import { sandboxTrackingNumber } from "../../src/shipping/sandbox-carrier";
import type { ShipmentRepository } from "../../src/shipping/shipment-repository";
import { createTestDatabase, type TestDatabase } from "../support/database";

const secret = "carrier-secret-0123456789";
const easyPostSecret = "easypost-webhook-secret-0123456789";
const logger = createLogger({ level: "silent" });

describe("POST /api/carrier/webhook", () => {
  let database: TestDatabase;
  let shipments: ShipmentRepository;
  let published: ShipmentDeliveredEvent[];
  let failNextPublish: boolean;
  let app: Express;

  beforeAll(async () => {
    database = await createTestDatabase();
    shipments = createShipmentRepository(database.db);
    const carrierWebhook = carrierWebhookRouter({
      secret,
      easyPostSecret,
      shipments,
      logger,
      publish: async (event) => {
        if (failNextPublish) {
          failNextPublish = false;
          throw new Error("Inngest unreachable");
        }
        published.push(event);
      },
    });
    app = buildApp({ logger, readiness: await createDatabaseReadiness(database.db), carrierWebhook });
  });
  beforeEach(() => {
    published = [];
    failNextPublish = false;
  });
  afterAll(() => database.drop());

  async function bookedShipment(): Promise<{ orderId: string; trackingNumber: string }> {
    const order = await database.db.order.create({
      data: { customerId: "cus_hook", email: "buyer@example.com", currency: "usd", total: 1000 },
    });
    const trackingNumber = sandboxTrackingNumber(order.id);
    await shipments.recordBooked(order.id, {
      carrier: "sandbox",
      trackingNumber,
      trackingUrl: `https://shop.example/track/${trackingNumber}`,
    });
    return { orderId: order.id, trackingNumber };
  }

  /** Signs the body correctly unless told otherwise; `null` sends no signature at all. */
  function post(body: string, signature?: string | null) {
    const req = request(app).post("/api/carrier/webhook").set("content-type", "application/json");
    const header = signature === undefined ? carrierSignature(Buffer.from(body), secret) : signature;
    return (header === null ? req : req.set("x-carrier-signature", header)).send(body);
  }

  it("marks the shipment delivered and publishes shop/shipment.delivered with a deduplicating id", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    const body = JSON.stringify({ trackingNumber, status: "delivered", deliveredAt: "2026-11-01T09:30:00Z" });

    const res = await post(body).expect(200);

    expect(res.body).toEqual({
      received: true,
      orderId,
      trackingNumber,
      deliveredAt: "2026-11-01T09:30:00.000Z",
      repeat: false,
    });
    expect(published).toEqual([
      {
        id: `shipment-delivered-${orderId}`,
        name: "shop/shipment.delivered",
        data: { orderId, trackingNumber, deliveredAt: "2026-11-01T09:30:00.000Z" },
      },
    ]);
    expect(await shipments.findByOrderId(orderId)).toMatchObject({
      status: "delivered",
      deliveredAt: new Date("2026-11-01T09:30:00Z"),
    });
  });

  it("answers a repeated notice with the first delivery time and the same event id", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    await post(
      JSON.stringify({ trackingNumber, status: "delivered", deliveredAt: "2026-11-01T09:30:00Z" }),
    ).expect(200);

    const res = await post(
      JSON.stringify({ trackingNumber, status: "delivered", deliveredAt: "2026-11-02T09:30:00+01:00" }),
    ).expect(200);

    expect(res.body.repeat).toBe(true);
    expect(published.map((e) => e.id)).toEqual([
      `shipment-delivered-${orderId}`,
      `shipment-delivered-${orderId}`,
    ]);
    expect(published[1]?.data.deliveredAt).toBe("2026-11-01T09:30:00.000Z");
  });

  it("uses the time of receipt when the carrier gives none", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    const before = Date.now();

    await post(JSON.stringify({ trackingNumber, status: "delivered" })).expect(200);

    const shipment = await shipments.findByOrderId(orderId);
    expect(shipment?.deliveredAt?.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(published[0]?.data.deliveredAt).toBe(shipment?.deliveredAt?.toISOString());
  });

  it.each([
    ["a missing signature", null],
    ["a signature with another secret", carrierSignature(Buffer.from("x"), "another-secret-0123456789")],
    ["a malformed signature", "not-hex"],
  ])("rejects %s with 400 invalid_signature and changes nothing", async (_label, signature) => {
    const { orderId, trackingNumber } = await bookedShipment();
    const body = JSON.stringify({ trackingNumber, status: "delivered" });

    const res = await post(body, signature).expect(400);

    expect(res.body.error.code).toBe("invalid_signature");
    expect(await shipments.findByOrderId(orderId)).toMatchObject({ status: "booked", deliveredAt: null });
    expect(published).toEqual([]);
  });

  it("rejects a body signed for different bytes (re-serialised JSON)", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    const signed = JSON.stringify({ trackingNumber, status: "delivered" });
    const sent = JSON.stringify({ trackingNumber, status: "delivered" }, null, 2);

    await post(sent, carrierSignature(Buffer.from(signed), secret)).expect(400);

    expect(await shipments.findByOrderId(orderId)).toMatchObject({ status: "booked" });
  });

  it.each([
    ["an unknown status", { status: "in_transit" }],
    ["a missing tracking number", { trackingNumber: undefined }],
    ["a malformed delivery time", { deliveredAt: "yesterday" }],
  ])("rejects %s with 400 validation_failed", async (_label, override) => {
    const { orderId, trackingNumber } = await bookedShipment();
    const body = JSON.stringify({ trackingNumber, status: "delivered", ...override });

    const res = await post(body).expect(400);

    expect(res.body.error.code).toBe("validation_failed");
    expect(res.body.error.details.length).toBeGreaterThan(0);
    expect(await shipments.findByOrderId(orderId)).toMatchObject({ status: "booked" });
  });

  it("rejects signed bytes that are not JSON", async () => {
    const res = await post("{not json").expect(400);
    expect(res.body.error.code).toBe("invalid_json");
  });

  it("answers 404 not_found for an unknown tracking number", async () => {
    const res = await post(JSON.stringify({ trackingNumber: "SBXUNKNOWN", status: "delivered" })).expect(404);
    expect(res.body.error.code).toBe("not_found");
    expect(published).toEqual([]);
  });

  it("answers 500 when the event cannot be published, and publishes on the carrier's retry", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    const body = JSON.stringify({ trackingNumber, status: "delivered", deliveredAt: "2026-11-01T09:30:00Z" });
    failNextPublish = true;

    await post(body).expect(500);
    expect(published).toEqual([]);
    await post(body).expect(200);

    expect(published).toEqual([expect.objectContaining({ id: `shipment-delivered-${orderId}` })]);
  });

  it("refuses bodies over 64 kB", async () => {
    const body = JSON.stringify({ trackingNumber: "x".repeat(70_000), status: "delivered" });
    const res = await post(body).expect(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  // Issue 14 (Low): "a captured notice can be replayed forever".
  it("issue 14: refuses a captured notice replayed after the signature's tolerance, and changes nothing", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    const body = JSON.stringify({ trackingNumber, status: "delivered" });
    const captured = carrierSignature(Buffer.from(body), secret, Date.now() - 60 * 60 * 1000);

    const res = await post(body, captured).expect(400);

    expect(res.body.error.code).toBe("invalid_signature");
    expect(await shipments.findByOrderId(orderId)).toMatchObject({ status: "booked", deliveredAt: null });
    expect(published).toEqual([]);
  });

  // Issue 14 (Low): "`deliveredAt` in 2099 is accepted."
  it("issue 14: refuses a deliveredAt in 2099 with 400 validation_failed, and changes nothing", async () => {
    const { orderId, trackingNumber } = await bookedShipment();
    const body = JSON.stringify({ trackingNumber, status: "delivered", deliveredAt: "2099-01-01T00:00:00Z" });

    const res = await post(body).expect(400);

    expect(res.body.error.code).toBe("validation_failed");
    expect(await shipments.findByOrderId(orderId)).toMatchObject({ status: "booked", deliveredAt: null });
    expect(published).toEqual([]);
  });

  describe("EasyPost tracker events (X-Hmac-Signature)", () => {
    function trackerEvent(trackingCode: string, status: string, datetime = "2026-11-01T09:30:00Z") {
      return JSON.stringify({
        id: `evt_${Math.random().toString(16).slice(2)}`,
        object: "Event",
        mode: "test",
        description: "tracker.updated",
        previous_attributes: { status: "in_transit" },
        result: {
          id: "trk_1",
          object: "Tracker",
          tracking_code: trackingCode,
          status,
          shipment_id: "shp_1",
          tracking_details: [
            { object: "TrackingDetail", status: "in_transit", datetime: "2026-10-30T09:30:00Z" },
            { object: "TrackingDetail", status, datetime },
          ],
        },
      });
    }
    const postEasyPost = (body: string, signature = easyPostWebhookSignature(body, easyPostSecret)) =>
      request(app)
        .post("/api/carrier/webhook")
        .set("content-type", "application/json")
        .set("x-hmac-signature", signature)
        .send(body);

    it("records in_transit on the shipment, then delivered: marks it delivered at the scan time and publishes", async () => {
      const { orderId, trackingNumber } = await bookedShipment();

      await postEasyPost(trackerEvent(trackingNumber, "in_transit")).expect(200);
      expect(await shipments.findByOrderId(orderId)).toMatchObject({
        status: "booked",
        trackerStatus: "in_transit",
      });
      expect(published).toEqual([]);

      const res = await postEasyPost(trackerEvent(trackingNumber, "delivered")).expect(200);

      expect(res.body).toMatchObject({
        orderId,
        status: "delivered",
        deliveredAt: "2026-11-01T09:30:00.000Z",
      });
      expect(published).toEqual([
        {
          id: `shipment-delivered-${orderId}`,
          name: "shop/shipment.delivered",
          data: { orderId, trackingNumber, deliveredAt: "2026-11-01T09:30:00.000Z" },
        },
      ]);
      expect(await shipments.findByOrderId(orderId)).toMatchObject({
        status: "delivered",
        trackerStatus: "delivered",
      });
    });

    it("issue 13: a carrier event with a bad signature gets 400 and changes nothing", async () => {
      const { orderId, trackingNumber } = await bookedShipment();
      const body = trackerEvent(trackingNumber, "delivered");

      for (const signature of [
        easyPostWebhookSignature(body, "another-secret-0123456789"),
        easyPostWebhookSignature(`${body} `, easyPostSecret),
        "hmac-sha256-hex=00",
        "",
      ]) {
        const res = await postEasyPost(body, signature).expect(400);
        expect(res.body.error.code).toBe("invalid_signature");
      }
      expect(await shipments.findByOrderId(orderId)).toMatchObject({
        status: "booked",
        deliveredAt: null,
        trackerStatus: null,
      });
      expect(published).toEqual([]);
    });

    it("uses the time of receipt when the scan time is in the future", async () => {
      const { orderId, trackingNumber } = await bookedShipment();
      const before = Date.now();

      await postEasyPost(trackerEvent(trackingNumber, "delivered", "2099-01-01T00:00:00Z")).expect(200);

      const shipment = await shipments.findByOrderId(orderId);
      expect(shipment?.deliveredAt?.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(shipment?.deliveredAt?.getTime()).toBeLessThanOrEqual(Date.now());
    });

    it("acknowledges events for trackers that are not ours, and other event types, without changing anything", async () => {
      const unknown = await postEasyPost(trackerEvent("9400UNKNOWN", "delivered")).expect(200);
      expect(unknown.body.ignored).toBe("unknown tracking number");
      const batch = JSON.stringify({
        id: "evt_b",
        object: "Event",
        description: "batch.updated",
        result: {},
      });
      expect((await postEasyPost(batch).expect(200)).body.ignored).toMatch(/batch.updated/);
      expect(published).toEqual([]);
    });
  });
});
