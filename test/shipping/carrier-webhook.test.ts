import request from "supertest";
import type { Express } from "express";
import { buildApp } from "../../src/app";
import { createDatabaseReadiness } from "../../src/health/readiness";
import { createLogger } from "../../src/logger";
import { easyPostWebhookSignature } from "../../src/dev/easypost-sandbox";
import type { ShipmentDeliveredEvent } from "../../src/events/contracts";
import { carrierWebhookRouter } from "../../src/shipping/carrier-webhook";
import { createShipmentRepository } from "../../src/shipping/prisma-shipment-repository";
import type { ShipmentRepository } from "../../src/shipping/shipment-repository";
import { createTestDatabase, type TestDatabase } from "../support/database";

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
    const trackingNumber = `9400${order.id.replace(/-/g, "").slice(0, 18).toUpperCase()}`;
    await shipments.recordBooked(order.id, {
      carrier: "USPS",
      trackingNumber,
      trackingUrl: `https://track.easypost.com/${trackingNumber}`,
    });
    return { orderId: order.id, trackingNumber };
  }

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
      expect((await shipments.listByOrder(orderId))[0]).toMatchObject({
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
      expect((await shipments.listByOrder(orderId))[0]).toMatchObject({
        status: "delivered",
        trackerStatus: "delivered",
      });
    });

    it("a carrier event with a bad signature gets 400 and changes nothing", async () => {
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
      expect((await shipments.listByOrder(orderId))[0]).toMatchObject({
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

      const shipment = (await shipments.listByOrder(orderId))[0];
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
    it("answers a repeated delivery with the first delivery time and the same event id", async () => {
      const { orderId, trackingNumber } = await bookedShipment();
      await postEasyPost(trackerEvent(trackingNumber, "delivered", "2026-11-01T09:30:00Z")).expect(200);

      const res = await postEasyPost(
        trackerEvent(trackingNumber, "delivered", "2026-11-02T09:30:00Z"),
      ).expect(200);

      expect(res.body.repeat).toBe(true);
      expect(published.map((e) => e.id)).toEqual([
        `shipment-delivered-${orderId}`,
        `shipment-delivered-${orderId}`,
      ]);
      expect(published[1]?.data.deliveredAt).toBe("2026-11-01T09:30:00.000Z");
    });

    it("answers 500 when the event cannot be published, and publishes on the carrier's retry", async () => {
      const { orderId, trackingNumber } = await bookedShipment();
      const body = trackerEvent(trackingNumber, "delivered");
      failNextPublish = true;

      await postEasyPost(body).expect(500);
      expect(published).toEqual([]);
      await postEasyPost(body).expect(200);

      expect(published).toEqual([expect.objectContaining({ id: `shipment-delivered-${orderId}` })]);
    });

    it("marks the order delivered itself before publishing, and says so in the event (decision 0195)", async () => {
      const marks: { orderId: string; deliveredAt: string; publishedBefore: number }[] = [];
      const marking = carrierWebhookRouter({
        easyPostSecret,
        shipments,
        logger,
        markOrderDelivered: async (orderId, deliveredAt) => {
          marks.push({ orderId, deliveredAt, publishedBefore: published.length });
        },
        publish: async (event) => {
          if (failNextPublish) {
            failNextPublish = false;
            throw new Error("Inngest unreachable");
          }
          published.push(event);
        },
      });
      const markingApp = buildApp({
        logger,
        readiness: await createDatabaseReadiness(database.db),
        carrierWebhook: marking,
      });
      const { orderId, trackingNumber } = await bookedShipment();
      const body = trackerEvent(trackingNumber, "delivered");
      const post = () =>
        request(markingApp)
          .post("/api/carrier/webhook")
          .set("content-type", "application/json")
          .set("x-hmac-signature", easyPostWebhookSignature(body, easyPostSecret))
          .send(body);
      failNextPublish = true;

      await post().expect(500);
      // Marked, not published: the carrier's retry marks again (a no-op for the order) and publishes.
      await post().expect(200);

      const deliveredAt = "2026-11-01T09:30:00.000Z";
      expect(marks).toEqual([
        { orderId, deliveredAt, publishedBefore: 0 },
        { orderId, deliveredAt, publishedBefore: 0 },
      ]);
      expect(published).toEqual([
        {
          id: `shipment-delivered-${orderId}`,
          name: "shop/shipment.delivered",
          data: { orderId, trackingNumber, deliveredAt, orderMarked: true },
        },
      ]);
    });

    it("refuses an unsigned body with 400 invalid_signature, and bodies over 64 kB with 413", async () => {
      const { orderId, trackingNumber } = await bookedShipment();
      const unsigned = await request(app)
        .post("/api/carrier/webhook")
        .set("content-type", "application/json")
        .send(trackerEvent(trackingNumber, "delivered"))
        .expect(400);
      expect(unsigned.body.error.code).toBe("invalid_signature");
      expect((await shipments.listByOrder(orderId))[0]).toMatchObject({
        status: "booked",
        deliveredAt: null,
      });

      const large = await postEasyPost(trackerEvent("x".repeat(70_000), "delivered")).expect(413);
      expect(large.body.error.code).toBe("payload_too_large");
      expect(published).toEqual([]);
    });
  });
});
