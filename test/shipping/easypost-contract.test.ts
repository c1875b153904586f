import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import type { z } from "zod";
import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import { createEasyPostLedger } from "../../src/reconciliation/carrier-ledger";
import { easyPostTrackerStatuses } from "../../src/shipping/carrier-webhook";
import {
  createEasyPostCarrier,
  createEasyPostClient,
  easyPostReference,
  type EasyPost,
  type WarehouseAddress,
} from "../../src/shipping/easypost-carrier";
import { createEasyPostReturnLabels, returnLabelReference } from "../../src/shipping/return-labels";
import type { ShippingAddress } from "../../src/shipping/shipping-provider";
import {
  addressShape,
  boughtShipmentShape,
  disagreements,
  documentedKeys,
  documentedTrackerStatuses,
  errorShape,
  refundEventShape,
  shipmentListShape,
  shipmentShape,
  trackerEventShape,
  verifiedAddressShape,
} from "./easypost-shapes";
import { createEasyPostRateQuoter } from "../../src/shipping/live-rates";

/**
 * The EasyPost stand-in held to EasyPost's documented answers (the shapes, and where each comes
 * from, are in ./easypost-shapes.ts): every call the service makes, through the service's own
 * code and the official @easypost/api client, and every event it receives. Each raw answer is
 * caught by the client's response hook, as it came off the wire, and compared key by key: every
 * documented key present with its JSON type, documented enum values only, EasyPost's error codes,
 * messages and item shapes. The last test proves the comparison bites: each documented key taken
 * out of a real answer of the stand-in makes it fail.
 */

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
const nextOrderId = () => `00000000-0000-4000-8042-${String(++orderSeq).padStart(12, "0")}`;

interface Answer {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

/** Which documented shape an answer must have, by the call it answers. */
function shapeOf(answer: Answer): { call: string; shape: z.ZodType } {
  const { pathname } = new URL(answer.path);
  const route = pathname.replace(/^\/v2\//, "");
  if (answer.status >= 400) return { call: "error", shape: errorShape };
  if (answer.method === "post" && route === "addresses")
    return { call: "Address.create", shape: addressShape };
  if (answer.method === "post" && route === "shipments")
    return { call: "Shipment.create", shape: shipmentShape };
  if (answer.method === "get" && route === "shipments")
    return { call: "Shipment.all", shape: shipmentListShape };
  if (answer.method === "get" && /^shipments\/[^/]+$/.test(route))
    return { call: "Shipment.retrieve", shape: shipmentShape };
  if (answer.method === "post" && /^shipments\/[^/]+\/buy$/.test(route))
    return { call: "Shipment.buy", shape: boughtShipmentShape };
  if (answer.method === "post" && /^shipments\/[^/]+\/refund$/.test(route))
    return { call: "Shipment.refund", shape: boughtShipmentShape };
  throw new Error(`No documented shape for ${answer.method} ${route}`);
}

describe("EasyPost stand-in against EasyPost's documented answers", () => {
  let sandbox: EasyPostSandbox;
  let client: EasyPost;
  const answers: Answer[] = [];
  const secret = "easypost-contract-secret-0123";

  beforeAll(async () => {
    sandbox = createEasyPostSandbox({ webhookSecret: secret, logger: pino({ level: "silent" }) });
    await sandbox.listen(0);
    client = await createEasyPostClient({ apiKey: "EZTK_contract", apiBase: sandbox.apiBase as string });
    client.addResponseHook((response) => {
      answers.push({
        method: response.method,
        path: response.path,
        status: response.httpStatus,
        body: structuredClone(response.responseBody) as unknown,
      });
    });
  });
  afterAll(() => sandbox.close());

  const carrier = (serviceLevels = ["GroundAdvantage", "Ground", "FEDEX_GROUND"]) =>
    createEasyPostCarrier({ client: async () => client, warehouse, serviceLevels, itemWeightOz: 16 });
  const returnLabels = () =>
    createEasyPostReturnLabels({
      client: async () => client,
      warehouse,
      serviceLevels: ["GroundAdvantage", "Ground"],
      itemWeightOz: 16,
    });
  /** The answers to calls made since `from`, each checked against its shape. */
  const expectConforming = (from: number) => {
    const checked = answers.slice(from).map((answer) => {
      const { call, shape } = shapeOf(answer);
      return { call, status: answer.status, disagreements: disagreements(shape, answer.body) };
    });
    expect(checked.filter((answer) => answer.disagreements.length > 0)).toEqual([]);
    return checked.map((answer) => `${answer.call} ${answer.status}`);
  };
  const errorOf = (answer: Answer | undefined) => (answer?.body as z.infer<typeof errorShape>).error;

  it("the tracker statuses the service accepts are EasyPost's documented ones, no more, no fewer", () => {
    expect([...easyPostTrackerStatuses].sort()).toEqual([...documentedTrackerStatuses].sort());
  });

  it("Address.create with verify: a deliverable address verified (zip4, delivery) and normalised; an undeliverable one with E.ADDRESS.NOT_FOUND items and `details: {}`", async () => {
    const from = answers.length;
    expect(await carrier().verifyAddress?.(customer)).toEqual({ deliverable: true });
    const verdict = await carrier().verifyAddress?.({ ...customer, line1: "1 Undeliverable Way" });
    expect(verdict).toEqual({ deliverable: false, message: "Address not found" });
    expect(expectConforming(from)).toEqual(["Address.create 201", "Address.create 201"]);

    const [good, bad] = answers.slice(from).map((answer) => answer.body);
    expect(disagreements(verifiedAddressShape, good)).toEqual([]);
    expect(good).toMatchObject({
      street1: "510 TOWNSEND ST",
      zip: expect.stringMatching(/^94103-\d{4}$/),
      verifications: { delivery: { success: true, errors: [] }, zip4: { success: true, details: null } },
    });
    // As EasyPost recorded it (Address-Service/creates-an-address-with-verify-param).
    const notFound = {
      code: "E.ADDRESS.NOT_FOUND",
      field: "address",
      message: "Address not found",
      suggestion: null,
    };
    expect(bad).toMatchObject({
      street1: "1 Undeliverable Way",
      verifications: {
        zip4: { success: false, errors: [notFound], details: null },
        delivery: { success: false, errors: [notFound], details: {} },
      },
    });
  });

  it("Address.create with verify_strict on an undeliverable address: 422 ADDRESS.VERIFY.FAILURE whose items carry code and suggestion", async () => {
    const from = answers.length;
    await expect(
      client.Address.create({
        street1: "1 Undeliverable Way",
        city: "X",
        zip: "00000",
        country: "US",
        verify_strict: true,
      }),
    ).rejects.toMatchObject({ statusCode: 422, code: "ADDRESS.VERIFY.FAILURE" });
    expectConforming(from);
    expect(errorOf(answers[from])).toEqual({
      code: "ADDRESS.VERIFY.FAILURE",
      message: "Unable to verify address.",
      errors: [
        { code: "E.ADDRESS.NOT_FOUND", field: "address", message: "Address not found", suggestion: null },
      ],
    });
  });

  it("Shipment.create without a shipment: 422 PARAMETER.REQUIRED, as EasyPost recorded it", async () => {
    const from = answers.length;
    await expect(client.Shipment.create(undefined as never)).rejects.toMatchObject({
      statusCode: 422,
      code: "PARAMETER.REQUIRED",
    });
    expectConforming(from);
    expect(errorOf(answers[from])).toEqual({
      code: "PARAMETER.REQUIRED",
      message: "Missing required parameter.",
      errors: [{ field: "shipment", message: "cannot be blank" }],
    });
  });

  it("live rates: a shipment to a country and postal code is rated (EasyPost's shapes); to an unratable country, no rates and a rate_error per carrier; neither is bought", async () => {
    const from = answers.length;
    const quoter = createEasyPostRateQuoter({ client: async () => client, warehouse });
    const rated = await quoter.quote({ country: "US", region: "NY", postalCode: "10001" }, [
      { weightOz: 20 },
    ]);
    const none = await quoter.quote({ country: "IR", postalCode: "11369" }, [{ weightOz: 20 }]);
    expect(expectConforming(from)).toEqual(["Shipment.create 201", "Shipment.create 201"]);
    const [ratedAnswer, noneAnswer] = answers.slice(from).map((a) => a.body as z.infer<typeof shipmentShape>);
    expect(ratedAnswer?.to_address).toMatchObject({ zip: "10001", state: "NY", country: "US" });
    expect(rated.map((r) => `${r.carrier} ${r.service}`).sort()).toEqual(
      (ratedAnswer?.rates ?? []).map((r) => `${r.carrier} ${r.service}`).sort(),
    );
    expect(noneAnswer).toMatchObject({ rates: [], postage_label: null });
    expect(noneAnswer?.messages.map((m) => [m.carrier, m.type])).toEqual([
      ["USPS", "rate_error"],
      ["UPS", "rate_error"],
      ["FedEx", "rate_error"],
    ]);
    expect(none).toEqual([]);
  });

  it("a booking: retrieve by reference (404), create (defaults filled), buy (destination verified); then retrieve by id and by reference, and a second buy refused", async () => {
    const orderId = nextOrderId();
    const reference = easyPostReference(orderId);
    const from = answers.length;
    const booking = await carrier().createShipment({ orderId, address: customer, lines });
    expect(expectConforming(from)).toEqual(["error 404", "Shipment.create 201", "Shipment.buy 200"]);
    expect(errorOf(answers[from])).toEqual({
      code: "NOT_FOUND",
      message: "The requested resource could not be found.",
      errors: [],
    });
    const created = answers[from + 1]?.body as z.infer<typeof shipmentShape>;
    // The request set label_format and print_custom_1 only: EasyPost fills the rest.
    expect(created.options).toMatchObject({
      label_format: "PNG",
      currency: "USD",
      payment: { type: "SENDER" },
      date_advance: 0,
    });
    expect(created).toMatchObject({ order_id: null, is_return: false, reference, postage_label: null });
    expect(created.to_address.verifications).toEqual({});
    const bought = answers[from + 2]?.body as z.infer<typeof boughtShipmentShape>;
    expect(bought.to_address).toMatchObject({
      name: "ADA LOVELACE",
      street1: "510 TOWNSEND ST",
      city: "SAN FRANCISCO",
      zip: expect.stringMatching(/^94103-\d{4}$/),
      residential: true,
    });
    expect(bought.buyer_address.zip).toBe(bought.to_address.zip);
    expect(bought.tracker).toMatchObject({ is_return: false, finalized: false, status: "unknown", fees: [] });

    const retrieved = answers.length;
    const byId = await client.Shipment.retrieve(booking.providerId as string);
    const byReference = await client.Shipment.retrieve(reference);
    expect(expectConforming(retrieved)).toEqual(["Shipment.retrieve 200", "Shipment.retrieve 200"]);
    expect(byReference.id).toBe(byId.id);

    const second = answers.length;
    await expect(client.Shipment.buy(byId.id, byId.rates[0]?.id as string)).rejects.toMatchObject({
      statusCode: 422,
      code: "SHIPMENT.POSTAGE.EXISTS",
    });
    expectConforming(second);
    // Asked again through the service (a retried step): read back, nothing bought twice.
    expect(await carrier().createShipment({ orderId, address: customer, lines })).toEqual(booking);
    expect(sandbox.purchased().filter((s) => s.reference === reference)).toHaveLength(1);
  });

  it("a return label (is_return): EasyPost swaps the addresses; the tracker says is_return", async () => {
    const returnId = `00000000-0000-4000-8142-${String(++orderSeq).padStart(12, "0")}`;
    const from = answers.length;
    await returnLabels().buy({ returnId, address: customer, lines });
    expect(expectConforming(from)).toEqual(["error 404", "Shipment.create 201", "Shipment.buy 200"]);
    const bought = answers.at(-1)?.body as z.infer<typeof boughtShipmentShape>;
    expect(bought).toMatchObject({ is_return: true, reference: returnLabelReference(returnId) });
    expect(bought.to_address.street1).toBe("417 MONTGOMERY ST");
    expect(bought.from_address.street1).toBe("510 Townsend St");
    expect(bought.tracker.is_return).toBe(true);
  });

  it("refunds: submitted before a scan and after one; decided later (refunded, rejected) on a retrieve and in a refund.successful event", async () => {
    const unscannedOrder = nextOrderId();
    const unscanned = await carrier().createShipment({ orderId: unscannedOrder, address: customer, lines });
    const scannedOrder = nextOrderId();
    const scanned = await carrier().createShipment({ orderId: scannedOrder, address: customer, lines });
    await sandbox.advanceTracker(scanned.trackingNumber, "in_transit", { deliver: false });

    const from = answers.length;
    expect(await carrier().voidShipment?.(unscannedOrder, unscanned.trackingNumber)).toBe("submitted");
    expect(await carrier().voidShipment?.(scannedOrder, scanned.trackingNumber)).toBe("submitted");
    expect(expectConforming(from)).toEqual([
      "Shipment.retrieve 200",
      "Shipment.refund 200",
      "Shipment.retrieve 200",
      "Shipment.refund 200",
    ]);

    await sandbox.settleLabelRefund(unscanned.providerId as string, undefined, { deliver: false });
    await sandbox.settleLabelRefund(scanned.providerId as string, undefined, { deliver: false });
    const later = answers.length;
    expect(await carrier().labelRefundStatus?.(unscannedOrder)).toBe("refunded");
    expect(await carrier().labelRefundStatus?.(scannedOrder)).toBe("rejected");
    expectConforming(later);

    const decided = sandbox
      .events()
      .filter((event) => event.description === "refund.successful")
      .map((event) => {
        // As a webhook receives it: the signed body, checked by the client.
        const { body, signature } = sandbox.signedDelivery(event.id);
        return client.Utils.validateWebhook(Buffer.from(body), { "X-Hmac-Signature": signature }, secret) as {
          result: { shipment_id: string; status: string };
        };
      })
      .filter((event) => [unscanned.providerId, scanned.providerId].includes(event.result.shipment_id));
    expect(decided.map((event) => [event.result.shipment_id, event.result.status])).toEqual([
      [unscanned.providerId, "refunded"],
      [scanned.providerId, "rejected"],
    ]);
    for (const event of decided) expect(disagreements(refundEventShape, event)).toEqual([]);
  });

  it("a carrier billed on scan: the refund answers not_applicable, in a documented shape", async () => {
    sandbox.setBilledOnScan(["USPS"]);
    try {
      const orderId = nextOrderId();
      const booking = await carrier(["GroundAdvantage"]).createShipment({
        orderId,
        address: customer,
        lines,
      });
      const from = answers.length;
      expect(await carrier().voidShipment?.(orderId, booking.trackingNumber)).toBe("not_applicable");
      expectConforming(from);
      expect((answers.at(-1)?.body as { refund_status: string }).refund_status).toBe("not_applicable");
    } finally {
      sandbox.setBilledOnScan([]);
    }
  });

  it("Shipment.all and getNextPage, as the reconciliation pages: newest first, no overlap, has_more until the end", async () => {
    for (let i = 0; i < 3; i++)
      await carrier().createShipment({ orderId: nextOrderId(), address: customer, lines });
    const from = answers.length;
    const seen: string[] = [];
    let page = (await client.Shipment.all({ page_size: 2, purchased: true })) as unknown as {
      shipments: { id: string; created_at: string }[];
      has_more: boolean;
    };
    for (;;) {
      seen.push(...page.shipments.map((shipment) => shipment.id));
      if (!page.has_more) break;
      page = (await client.Shipment.getNextPage(page as never, 2)) as unknown as typeof page;
    }
    expect(expectConforming(from).every((call) => call === "Shipment.all 200")).toBe(true);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(
      sandbox
        .purchased()
        .map((shipment) => shipment.id)
        .reverse(),
    );

    // The service's own ledger reads the same pages.
    const ledger = createEasyPostLedger(async () => client);
    const day = { start: new Date(Date.now() - 86_400_000), end: new Date(Date.now() + 60_000) };
    const pages: string[] = [];
    for await (const ledgerPage of ledger.shipmentPages(day as never))
      pages.push(...ledgerPage.map((s) => s.id));
    expect(pages).toEqual(seen);
  });

  it("tracker events: every delivered body is a documented tracker.updated Event whose Tracker and TrackingDetails are whole", async () => {
    const orderId = nextOrderId();
    const { trackingNumber } = await carrier().createShipment({ orderId, address: customer, lines });
    for (const status of ["pre_transit", "in_transit", "out_for_delivery", "delivered"] as const) {
      const { event } = await sandbox.advanceTracker(trackingNumber, status, { deliver: false });
      const { body, signature } = sandbox.signedDelivery(event.id);
      const received = client.Utils.validateWebhook(
        Buffer.from(body),
        { "X-Hmac-Signature": signature },
        secret,
      );
      expect(disagreements(trackerEventShape, received)).toEqual([]);
      expect(received).toMatchObject({ description: "tracker.updated", result: { status } });
    }
    const last = await client.Shipment.retrieve(easyPostReference(orderId));
    expect(last.tracker).toMatchObject({ status: "delivered", finalized: true });
  });

  it("a state file the earlier stand-in wrote (without the fields it lacked) still answers in the documented shape", async () => {
    const stateFile = path.join(mkdtempSync(path.join(tmpdir(), "easypost-state-")), "state.json");
    const options = { webhookSecret: secret, logger: pino({ level: "silent" }), stateFile };
    const before = createEasyPostSandbox(options);
    await before.listen(0);
    const orderId = nextOrderId();
    try {
      const earlier = createEasyPostCarrier({
        client: () => createEasyPostClient({ apiKey: "EZTK_contract", apiBase: before.apiBase as string }),
        warehouse,
        serviceLevels: ["GroundAdvantage"],
        itemWeightOz: 16,
      });
      const { trackingNumber } = await earlier.createShipment({ orderId, address: customer, lines });
      await before.advanceTracker(trackingNumber, "in_transit", { deliver: false });
    } finally {
      await before.close();
    }
    // What the stand-in wrote before this change: none of the fields it lacked.
    const state = JSON.parse(readFileSync(stateFile, "utf8")) as {
      shipments: Record<string, Record<string, unknown>>;
    };
    const drop = (object: unknown, keys: string[]) => {
      for (const key of keys) if (object && typeof object === "object") Reflect.deleteProperty(object, key);
    };
    const addressKeys = [
      "residential",
      "carrier_facility",
      "federal_tax_id",
      "state_tax_id",
      "verifications",
    ];
    for (const shipment of Object.values(state.shipments)) {
      drop(shipment, ["order_id"]);
      drop(shipment.options, ["payment", "date_advance"]);
      for (const key of ["to_address", "from_address", "return_address", "buyer_address"])
        drop(shipment[key], addressKeys);
      for (const rate of shipment.rates as unknown[]) drop(rate, ["billing_type"]);
      drop(shipment.selected_rate, ["billing_type"]);
      drop(shipment.postage_label, [
        "date_advance",
        "integrated_form",
        "label_type",
        "label_pdf_url",
        "label_zpl_url",
        "label_epl2_url",
        "label_file",
      ]);
      const tracker = shipment.tracker as { tracking_details?: unknown[] } | null;
      drop(tracker, ["carrier_detail", "fees", "finalized", "is_return"]);
      for (const detail of tracker?.tracking_details ?? []) drop(detail, ["description", "carrier_code"]);
    }
    writeFileSync(stateFile, JSON.stringify(state));

    const after = createEasyPostSandbox(options);
    await after.listen(0);
    try {
      const reader = await createEasyPostClient({
        apiKey: "EZTK_contract",
        apiBase: after.apiBase as string,
      });
      const shipment = await reader.Shipment.retrieve(easyPostReference(orderId));
      const { to_address: _destination, ...rest } = JSON.parse(JSON.stringify(shipment)) as Record<
        string,
        unknown
      >;
      // The destination verified at buy is not something an old file can have had; the rest is whole.
      expect(disagreements(boughtShipmentShape.omit({ to_address: true }), rest)).toEqual([]);
      expect(disagreements(addressShape, shipment.to_address)).toEqual([]);
    } finally {
      await after.close();
    }
  });

  it("every answer the stand-in gave in this file matched its documented shape, and every call the service makes was among them", () => {
    const calls = new Set(
      answers.map((answer) => (answer.status >= 400 ? `error ${answer.status}` : shapeOf(answer).call)),
    );
    expect([...calls].sort()).toEqual(
      [
        "Address.create",
        "Shipment.all",
        "Shipment.buy",
        "Shipment.create",
        "Shipment.refund",
        "Shipment.retrieve",
        "error 404",
        "error 422",
      ].sort(),
    );
    expectConforming(0);
  });

  it("the comparison bites: each documented key taken out of a real answer of the stand-in fails it", async () => {
    const orderId = nextOrderId();
    await carrier().createShipment({ orderId, address: customer, lines });
    const { event } = await sandbox.advanceTracker(easyPostReference(orderId), "in_transit", {
      deliver: false,
    });
    const bought = structuredClone(await client.Shipment.retrieve(easyPostReference(orderId))) as unknown;
    const samples: [string, z.ZodType, unknown][] = [
      ["bought Shipment", boughtShipmentShape, JSON.parse(JSON.stringify(bought))],
      ["tracker.updated Event", trackerEventShape, JSON.parse(sandbox.signedDelivery(event.id).body)],
    ];
    let removed = 0;
    for (const [name, shape, sample] of samples) {
      expect(disagreements(shape, sample)).toEqual([]);
      for (const path of documentedKeys(shape)) {
        const copy = structuredClone(sample);
        if (!removeAt(copy, path)) continue;
        removed += 1;
        const found = disagreements(shape, copy);
        if (found.length === 0) throw new Error(`${name}: removing ${path.join(".")} went unnoticed`);
      }
    }
    // Every key of the Shipment, its addresses, parcel, rates, label, tracker, fees and the event.
    expect(removed).toBeGreaterThan(250);
  });
});

/** Deletes the key at `path` (`[]`: the first item of an array); false when the path is not there. */
function removeAt(value: unknown, path: string[]): boolean {
  let node = value;
  for (const key of path.slice(0, -1)) {
    if (key === "[]") {
      if (!Array.isArray(node) || node.length === 0) return false;
      node = node[0];
    } else {
      if (typeof node !== "object" || node === null || !(key in node)) return false;
      node = (node as Record<string, unknown>)[key];
    }
  }
  const last = path.at(-1) as string;
  if (last === "[]" || typeof node !== "object" || node === null || Array.isArray(node) || !(last in node))
    return false;
  Reflect.deleteProperty(node, last);
  return true;
}
