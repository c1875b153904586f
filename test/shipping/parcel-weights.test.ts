import pino from "pino";
import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import { createCatalog } from "../../src/inventory/catalog";
import { createLowStockWatch } from "../../src/inventory/low-stock";
import { createStockLedger } from "../../src/inventory/stock-ledger";
import {
  createEasyPostCarrier,
  createEasyPostClient,
  easyPostReference,
} from "../../src/shipping/easypost-carrier";
import { createShipmentBooking } from "../../src/shipping/shipment-booking";
import { createShipmentRepository } from "../../src/shipping/prisma-shipment-repository";
import { createShippingDestinations } from "../../src/shipping/shipping-destinations";
import { createTestDatabase, type TestDatabase } from "../support/database";

describe("the catalog's weights make the EasyPost parcel", () => {
  let database: TestDatabase;
  let sandbox: EasyPostSandbox;
  beforeAll(async () => {
    database = await createTestDatabase();
    sandbox = createEasyPostSandbox({
      webhookSecret: "easypost-webhook-secret-0123",
      logger: pino({ level: "silent" }),
    });
    await sandbox.listen(0);
  });
  afterAll(async () => {
    await sandbox.close();
    await database.drop();
  });

  it("sums each line at its product's weight (the default for one without), in the configured box", async () => {
    const { db } = database;
    const catalog = createCatalog(db, {
      ledger: createStockLedger(db),
      lowStock: createLowStockWatch(db, {
        alerts: { notify: async () => undefined, runFailed: async () => undefined },
      }),
    });
    await catalog.create(
      { sku: "ANVIL", name: "Anvil", unitPrice: 9000, currency: "usd", weightOz: 40, stockOnHand: 5 },
      "admin-api",
    );
    await catalog.create(
      { sku: "FEATHER", name: "Feather", unitPrice: 100, currency: "usd", stockOnHand: 5 },
      "admin-api",
    );
    const order = await db.order.create({
      data: {
        customerId: "cus-w",
        email: "w@example.com",
        currency: "usd",
        total: 18_100,
        status: "fulfilling",
        shippingAddress: {
          name: "Ada",
          line1: "510 Townsend St",
          city: "San Francisco",
          state: "CA",
          postalCode: "94103",
          country: "US",
        },
        lines: {
          create: [
            { sku: "ANVIL", name: "Anvil", unitPrice: 9000, quantity: 2 },
            { sku: "FEATHER", name: "Feather", unitPrice: 100, quantity: 1 },
          ],
        },
      },
    });
    const booking = createShipmentBooking({
      provider: createEasyPostCarrier({
        client: () =>
          createEasyPostClient({ apiKey: "EZTK_test", apiBase: sandbox.apiBase as string, timeoutMs: 5_000 }),
        warehouse: {
          name: "W",
          line1: "417 Montgomery St",
          city: "San Francisco",
          state: "CA",
          postalCode: "94104",
          country: "US",
        },
        serviceLevels: ["GroundAdvantage", "Ground", "FEDEX_GROUND"],
        itemWeightOz: 16,
        box: { lengthIn: 12, widthIn: 9, heightIn: 4 },
      }),
      shipments: createShipmentRepository(db),
      destinations: createShippingDestinations(db),
    });

    await booking.book({
      orderId: order.id,
      lines: [
        { sku: "ANVIL", quantity: 2 },
        { sku: "FEATHER", quantity: 1 },
      ],
    });

    const [shipment] = sandbox.purchased().filter((s) => s.reference === easyPostReference(order.id));
    expect(shipment?.parcel).toMatchObject({ weight: 2 * 40 + 16, length: 12, width: 9, height: 4 });
  });
  it("books with the carrier from the one read of destination and parcels, and a retry finds the current parcels", async () => {
    const { db } = database;
    await db.product.upsert({
      where: { sku: "ANVIL" },
      update: {},
      create: { sku: "ANVIL", name: "Anvil", unitPrice: 9000, currency: "usd", weightOz: 40, stockOnHand: 5 },
    });
    const order = await db.order.create({
      data: {
        customerId: "cus-w2",
        email: "w2@example.com",
        currency: "usd",
        total: 9_000,
        status: "fulfilling",
        shippingAddress: {
          name: "Ada",
          line1: "510 Townsend St",
          city: "San Francisco",
          state: "CA",
          postalCode: "94103",
          country: "US",
        },
        lines: { create: [{ sku: "ANVIL", name: "Anvil", unitPrice: 9000, quantity: 1 }] },
      },
    });
    const shipments = createShipmentRepository(db);
    const booking = createShipmentBooking({
      provider: createEasyPostCarrier({
        client: () =>
          createEasyPostClient({ apiKey: "EZTK_test", apiBase: sandbox.apiBase as string, timeoutMs: 5_000 }),
        warehouse: {
          name: "W",
          line1: "417 Montgomery St",
          city: "San Francisco",
          state: "CA",
          postalCode: "94104",
          country: "US",
        },
        serviceLevels: ["GroundAdvantage", "Ground", "FEDEX_GROUND"],
        itemWeightOz: 16,
        box: { lengthIn: 12, widthIn: 9, heightIn: 4 },
      }),
      shipments,
      destinations: createShippingDestinations(db),
    });
    const request = { orderId: order.id, lines: [{ sku: "ANVIL", quantity: 1 }] };

    const [booked] = (await booking.bookWithCarrier(request)) ?? [];
    const bought = sandbox.purchased().filter((s) => s.reference === easyPostReference(order.id));
    expect(bought).toHaveLength(1);
    expect(bought[0]?.parcel).toMatchObject({ weight: 40 });
    if (!booked) throw new Error("no parcel booked");
    await shipments.recordBooked(order.id, booked, { parcelNumber: 1, generation: 0, lines: booked.lines });
    // A re-ship replaced parcel 1's label: the retry sees the new one only.
    await db.shipment.updateMany({ where: { orderId: order.id }, data: { supersededAt: new Date() } });
    await db.shipment.create({
      data: {
        orderId: order.id,
        parcelNumber: 1,
        generation: 1,
        lines: [{ sku: "ANVIL", quantity: 1 }],
        carrier: "USPS",
        trackingNumber: `reship-${order.id}`,
        trackingUrl: "https://tools.usps.com/reship",
      },
    });

    const again = await booking.bookWithCarrier(request);
    expect(again).toEqual([
      {
        carrier: "USPS",
        trackingNumber: `reship-${order.id}`,
        trackingUrl: "https://tools.usps.com/reship",
        parcelNumber: 1,
        lines: [{ sku: "ANVIL", quantity: 1 }],
      },
    ]);
    expect(sandbox.purchased().filter((s) => s.reference === easyPostReference(order.id))).toHaveLength(1);
  });
});
