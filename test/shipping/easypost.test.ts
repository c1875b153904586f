import pino from "pino";
import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import {
  createEasyPostCarrier,
  createEasyPostClient,
  easyPostReference,
  ShippingUnavailableError,
  type WarehouseAddress,
} from "../../src/shipping/easypost-carrier";
import type { ShippingAddress } from "../../src/shipping/shipping-provider";
import { eventually } from "../support/eventually";

const warehouse: WarehouseAddress = {
  name: "Shop Warehouse",
  line1: "417 Montgomery St",
  city: "San Francisco",
  state: "CA",
  postalCode: "94104",
  country: "US",
};
const customer: ShippingAddress = {
  name: "Ada Lovelace",
  phone: "+14155550123",
  line1: "510 Townsend St",
  city: "San Francisco",
  state: "CA",
  postalCode: "94103",
  country: "US",
};
const lines = [{ sku: "MUG", quantity: 2 }];
let orderSeq = 0;
const nextOrderId = () => `00000000-0000-4000-8000-${String(++orderSeq).padStart(12, "0")}`;

/** The real carrier's adapter, driven through the official library against the stand-in. */
describe("EasyPost carrier (official @easypost/api client against the EasyPost stand-in)", () => {
  let sandbox: EasyPostSandbox;
  let apiBase: string;
  beforeAll(async () => {
    sandbox = createEasyPostSandbox({
      webhookSecret: "easypost-webhook-secret-0123",
      logger: pino({ level: "silent" }),
    });
    await sandbox.listen(0);
    apiBase = sandbox.apiBase as string;
  });
  afterEach(() => sandbox.clearFailures());
  afterAll(() => sandbox.close());

  const carrier = (options: { timeoutMs?: number; serviceLevels?: string[] } = {}) =>
    createEasyPostCarrier({
      client: () =>
        createEasyPostClient({ apiKey: "EZTK_test", apiBase, timeoutMs: options.timeoutMs ?? 5_000 }),
      warehouse,
      serviceLevels: options.serviceLevels ?? ["GroundAdvantage", "Ground", "FEDEX_GROUND"],
      itemWeightOz: 16,
    });
  const purchasedFor = (orderId: string) =>
    sandbox.purchased().filter((s) => s.reference === easyPostReference(orderId));
  const callsFor = (endpoint: string, status: number) =>
    sandbox.requests.filter((r) => r.endpoint === endpoint && r.status === status);

  it("books several parcels of one order as several EasyPost shipments, each by its reference, and hands back one without the other", async () => {
    const orderId = nextOrderId();
    const one = { parcelNumber: 1, generation: 0 };
    const two = { parcelNumber: 2, generation: 0 };
    const first = await carrier().createShipment({ orderId, address: customer, lines, parcel: one });
    const second = await carrier().createShipment({
      orderId,
      address: customer,
      lines: [{ sku: "MUG", quantity: 1 }],
      parcel: two,
    });
    // Asked again (a retried step): found by reference, nothing bought twice.
    expect(await carrier().createShipment({ orderId, address: customer, lines, parcel: two })).toEqual(
      second,
    );
    expect(first.trackingNumber).not.toBe(second.trackingNumber);
    const bought = sandbox.purchased().filter((s) => s.reference?.startsWith(`order-${orderId}`));
    expect(bought.map((s) => [s.reference, s.parcel.weight])).toEqual([
      [`order-${orderId}`, 32],
      [`order-${orderId}-2`, 16],
    ]);
    expect(easyPostReference(orderId, { parcelNumber: 2, generation: 1 })).toBe(
      `order-${orderId}-2-reship-1`,
    );

    expect(await carrier().voidShipment?.(orderId, second.trackingNumber, two)).toBe("submitted");
    expect(await carrier().labelRefundStatus?.(orderId, two)).toBe("submitted");
    expect(await carrier().labelRefundStatus?.(orderId, one)).toBeNull();
  });

  it("buys the cheapest rate of the service level, from the warehouse to the customer, and returns label, carrier, service and tracking", async () => {
    const orderId = nextOrderId();
    const booking = await carrier().createShipment({ orderId, address: customer, lines });

    const [shipment] = purchasedFor(orderId);
    // EasyPost verifies and normalises the destination when it buys: capitals and ZIP+4.
    expect(shipment?.to_address).toMatchObject({
      name: "ADA LOVELACE",
      street1: "510 TOWNSEND ST",
      zip: expect.stringMatching(/^94103-\d{4}$/),
      country: "US",
      phone: "+14155550123",
      verifications: { delivery: { success: true } },
    });
    expect(shipment?.from_address).toMatchObject({ street1: "417 Montgomery St", zip: "94104" });
    expect(shipment?.parcel.weight).toBe(32);
    const eligible = (shipment?.rates ?? []).filter((r) =>
      ["GroundAdvantage", "Ground", "FEDEX_GROUND"].includes(r.service),
    );
    const cheapest = Math.min(...eligible.map((r) => Number(r.rate)));
    expect(Number(shipment?.selected_rate?.rate)).toBe(cheapest);
    expect(booking).toEqual({
      carrier: shipment?.selected_rate?.carrier,
      service: shipment?.selected_rate?.service,
      trackingNumber: shipment?.tracking_code,
      trackingUrl: shipment?.tracker?.public_url,
      labelUrl: shipment?.postage_label?.label_url,
      providerId: shipment?.id,
      // What the label cost, from the rate bought (decision 0203).
      labelAmount: Math.round(cheapest * 100),
      labelCurrency: "usd",
    });
  });

  it("asked again for the same order, returns the label already bought and buys nothing", async () => {
    const orderId = nextOrderId();
    const first = await carrier().createShipment({ orderId, address: customer, lines });
    const buysBefore = callsFor("shipments.buy", 200).length;

    const again = await carrier().createShipment({ orderId, address: customer, lines });

    expect(again).toEqual(first);
    expect(callsFor("shipments.buy", 200)).toHaveLength(buysBefore);
    expect(sandbox.shipments().filter((s) => s.reference === easyPostReference(orderId))).toHaveLength(1);
  });

  it("after a crash between create and buy, the retry buys the shipment already created (no second shipment)", async () => {
    const orderId = nextOrderId();
    sandbox.injectFailure("shipments.buy", { kind: "server_error" });
    await expect(carrier().createShipment({ orderId, address: customer, lines })).rejects.toMatchObject({
      statusCode: 500,
    });
    expect(sandbox.shipments().filter((s) => s.reference === easyPostReference(orderId))).toHaveLength(1);

    await carrier().createShipment({ orderId, address: customer, lines });

    expect(sandbox.shipments().filter((s) => s.reference === easyPostReference(orderId))).toHaveLength(1);
    expect(purchasedFor(orderId)).toHaveLength(1);
  });

  it("when the buy's answer is lost (the label was bought), the retry finds it bought and never buys twice", async () => {
    const orderId = nextOrderId();
    // The label is bought, and the answer never comes (not a delay racing the client's timeout).
    sandbox.injectFailure("shipments.buy", { kind: "hang", afterProcessing: true });
    await expect(
      carrier({ timeoutMs: 300 }).createShipment({ orderId, address: customer, lines }),
    ).rejects.toThrow();
    await eventually("the lost buy was made", () => purchasedFor(orderId).length > 0);
    expect(purchasedFor(orderId)).toHaveLength(1);
    const refusedBefore = callsFor("shipments.buy", 422).length;

    const booking = await carrier().createShipment({ orderId, address: customer, lines });

    expect(booking.trackingNumber).toBe(purchasedFor(orderId)[0]?.tracking_code);
    expect(purchasedFor(orderId)).toHaveLength(1);
    expect(callsFor("shipments.buy", 422)).toHaveLength(refusedBefore);
  });

  it("refuses to book without an address, and when no rate matches the service level", async () => {
    await expect(carrier().createShipment({ orderId: nextOrderId(), lines })).rejects.toBeInstanceOf(
      ShippingUnavailableError,
    );
    await expect(
      carrier({ serviceLevels: ["Teleport"] }).createShipment({
        orderId: nextOrderId(),
        address: customer,
        lines,
      }),
    ).rejects.toBeInstanceOf(ShippingUnavailableError);
  });

  it("answers with EasyPost's documented errors, which the library raises as its error classes", async () => {
    const client = await createEasyPostClient({ apiKey: "EZTK_test", apiBase });
    await expect(client.Shipment.retrieve("shp_missing")).rejects.toMatchObject({
      statusCode: 404,
      code: "NOT_FOUND",
    });
    await expect(
      client.Shipment.create({ to_address: { street1: "x" }, from_address: {}, parcel: { weight: 1 } }),
    ).rejects.toMatchObject({ statusCode: 422, code: "PARAMETER.REQUIRED" });
    const orderId = nextOrderId();
    await carrier().createShipment({ orderId, address: customer, lines });
    const [bought] = purchasedFor(orderId);
    await expect(
      client.Shipment.buy(bought?.id as string, bought?.selected_rate?.id as string),
    ).rejects.toMatchObject({
      statusCode: 422,
      code: "SHIPMENT.POSTAGE.EXISTS",
    });
    expect(purchasedFor(orderId)).toHaveLength(1);
  });

  it("advances a tracker through its statuses and signs each event the way EasyPost does", async () => {
    const orderId = nextOrderId();
    const { trackingNumber } = await carrier().createShipment({ orderId, address: customer, lines });
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { event } = await sandbox.advanceTracker(trackingNumber, undefined, { deliver: false });
      seen.push(event.result.status);
      const { body, signature } = sandbox.signedDelivery(event.id);
      const verified = (await createEasyPostClient({ apiKey: "EZTK_test" })).Utils.validateWebhook(
        Buffer.from(body),
        { "X-Hmac-Signature": signature },
        "easypost-webhook-secret-0123",
      ) as { description: string };
      expect(verified.description).toBe("tracker.updated");
    }
    expect(seen).toEqual(["pre_transit", "in_transit", "out_for_delivery", "delivered"]);
  });

  describe("label refunds (POST /shipments/:id/refund, the client's Shipment.refund)", () => {
    const refundCalls = (shipmentId: string) =>
      sandbox.requests.filter((r) => r.endpoint === "shipments.refund" && r.path.includes(shipmentId));

    it("before the first scan: submitted, asked once however often voided, refunded when the carrier processes it", async () => {
      const orderId = nextOrderId();
      const booking = await carrier().createShipment({ orderId, address: customer, lines });
      // "pre_transit" is the label created, not a scan.
      await sandbox.advanceTracker(booking.trackingNumber, "pre_transit", { deliver: false });
      expect(await carrier().voidShipment?.(orderId, booking.trackingNumber)).toBe("submitted");
      expect(await carrier().voidShipment?.(orderId, booking.trackingNumber)).toBe("submitted");
      expect(refundCalls(booking.providerId ?? "-")).toHaveLength(1);
      expect(await carrier().labelRefundStatus?.(orderId)).toBe("submitted");

      await sandbox.settleLabelRefund(easyPostReference(orderId));
      expect(await carrier().labelRefundStatus?.(orderId)).toBe("refunded");
      const [label] = purchasedFor(orderId);
      expect(label?.fees.every((fee) => fee.refunded)).toBe(true);
    });

    it("after the first scan EasyPost still answers submitted, and the carrier rejects it when it decides; a scan while submitted likewise", async () => {
      const scannedOrder = nextOrderId();
      const scanned = await carrier().createShipment({ orderId: scannedOrder, address: customer, lines });
      await sandbox.advanceTracker(scanned.trackingNumber, "in_transit", { deliver: false });
      expect(await carrier().voidShipment?.(scannedOrder, scanned.trackingNumber)).toBe("submitted");
      expect(await carrier().labelRefundStatus?.(scannedOrder)).toBe("submitted");
      await sandbox.settleLabelRefund(easyPostReference(scannedOrder), undefined, { deliver: false });
      expect(await carrier().labelRefundStatus?.(scannedOrder)).toBe("rejected");

      const movingOrder = nextOrderId();
      const moving = await carrier().createShipment({ orderId: movingOrder, address: customer, lines });
      expect(await carrier().voidShipment?.(movingOrder, moving.trackingNumber)).toBe("submitted");
      await sandbox.advanceTracker(moving.trackingNumber, "in_transit", { deliver: false });
      expect(await carrier().labelRefundStatus?.(movingOrder)).toBe("submitted");
      await sandbox.settleLabelRefund(easyPostReference(movingOrder), undefined, { deliver: false });
      expect(await carrier().labelRefundStatus?.(movingOrder)).toBe("rejected");
      // Decided is decided: the carrier's answer does not move again.
      await sandbox.settleLabelRefund(easyPostReference(movingOrder), "refunded", { deliver: false });
      expect(await carrier().labelRefundStatus?.(movingOrder)).toBe("rejected");
    });

    it("a carrier billed on scan answers not_applicable: nothing charged, nothing to refund, the same answer again", async () => {
      const orderId = nextOrderId();
      sandbox.setBilledOnScan(["USPS"]);
      try {
        const booking = await carrier({ serviceLevels: ["GroundAdvantage"] }).createShipment({
          orderId,
          address: customer,
          lines,
        });
        const [label] = purchasedFor(orderId);
        expect(label?.fees.find((fee) => fee.type === "PostageFee")?.charged).toBe(false);
        expect(await carrier().voidShipment?.(orderId, booking.trackingNumber)).toBe("not_applicable");
        expect(purchasedFor(orderId)[0]?.refund_status).toBe("not_applicable");
        // Asked again (a retried step): read first, not asked twice.
        expect(await carrier().voidShipment?.(orderId, booking.trackingNumber)).toBe("not_applicable");
        expect(refundCalls(booking.providerId ?? "-")).toHaveLength(1);
      } finally {
        sandbox.setBilledOnScan([]);
      }
    });

    it("with a processing time, a submitted refund reads refunded once it has passed", async () => {
      let now = 1_800_000_000_000;
      const timed = createEasyPostSandbox({
        webhookSecret: "easypost-webhook-secret-0123",
        logger: pino({ level: "silent" }),
        refundProcessingMs: 60_000,
        now: () => now,
      });
      await timed.listen(0);
      try {
        const timedCarrier = createEasyPostCarrier({
          client: () => createEasyPostClient({ apiKey: "EZTK_test", apiBase: timed.apiBase as string }),
          warehouse,
          serviceLevels: ["GroundAdvantage"],
          itemWeightOz: 16,
        });
        const orderId = nextOrderId();
        const booking = await timedCarrier.createShipment({ orderId, address: customer, lines });
        expect(await timedCarrier.voidShipment?.(orderId, booking.trackingNumber)).toBe("submitted");
        now += 59_000;
        expect(await timedCarrier.labelRefundStatus?.(orderId)).toBe("submitted");
        now += 1_000;
        expect(await timedCarrier.labelRefundStatus?.(orderId)).toBe("refunded");
      } finally {
        await timed.close();
      }
    });

    it("an unknown order's label is not found, and nothing is asked", async () => {
      const before = sandbox.requests.filter((r) => r.endpoint === "shipments.refund").length;
      expect(await carrier().voidShipment?.(nextOrderId(), "9400000")).toBe("not-found");
      expect(sandbox.requests.filter((r) => r.endpoint === "shipments.refund")).toHaveLength(before);
    });
  });
});
