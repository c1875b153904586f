import pino from "pino";
import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import {
  createInMemoryCarrierShipmentIds,
  type CarrierShipmentIds,
} from "../../src/shipping/carrier-shipment-ids";
import {
  createEasyPostCarrier,
  createEasyPostClient,
  easyPostReference,
  toEasyPostAddress,
  type WarehouseAddress,
} from "../../src/shipping/easypost-carrier";
import { createEasyPostReturnLabels, returnLabelReference } from "../../src/shipping/return-labels";
import type { ShippingAddress } from "../../src/shipping/shipping-provider";
import { eventually, gate } from "../support/eventually";

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
  line1: "510 Townsend St",
  city: "San Francisco",
  state: "CA",
  postalCode: "94103",
  country: "US",
};
const lines = [{ sku: "MUG", quantity: 1 }];
let seq = 0;
const nextId = () => `00000000-0000-4000-8185-${String(++seq).padStart(12, "0")}`;

/**
 * Decision 0185: the double-buy protection rests on the EasyPost shipment id recorded before the
 * buy, with the reference as the fallback for a create whose answer was lost. Each case here ends
 * with one label and one charge at the carrier: the stand-in's own record of what it sold.
 */
describe("EasyPost lost answers: one label, one charge (decision 0185)", () => {
  let sandbox: EasyPostSandbox;
  let ids: CarrierShipmentIds;
  beforeAll(async () => {
    sandbox = createEasyPostSandbox({
      webhookSecret: "lost-answers-secret-0123",
      logger: pino({ level: "silent" }),
    });
    await sandbox.listen(0);
  });
  beforeEach(() => {
    // One record shared by every attempt, as the database is shared by every retry and replica.
    ids = createInMemoryCarrierShipmentIds();
  });
  afterEach(() => sandbox.clearFailures());
  afterAll(() => sandbox.close());

  const client = (timeoutMs = 5_000) =>
    createEasyPostClient({ apiKey: "EZTK_test", apiBase: sandbox.apiBase as string, timeoutMs });
  const carrier = (timeoutMs?: number) =>
    createEasyPostCarrier({
      client: () => client(timeoutMs),
      warehouse,
      serviceLevels: ["GroundAdvantage"],
      itemWeightOz: 16,
      shipmentIds: ids,
    });
  const withReference = (reference: string) => sandbox.shipments().filter((s) => s.reference === reference);
  /** What the carrier charged for: labels bought, and postage fees charged on them. */
  const chargedFor = (reference: string) => {
    const bought = withReference(reference).filter((s) => s.postage_label !== null);
    return {
      labels: bought.length,
      postageCharges: bought.flatMap((s) => s.fees).filter((fee) => fee.type === "PostageFee" && fee.charged)
        .length,
      buys: sandbox.requests.filter(
        (r) =>
          r.endpoint === "shipments.buy" && r.status === 200 && bought.some((s) => r.path.includes(s.id)),
      ).length,
    };
  };

  it("create answered but lost: the retry finds the shipment by its reference, claims and buys it; nothing created twice", async () => {
    const orderId = nextId();
    const reference = easyPostReference(orderId);
    sandbox.injectFailure("shipments.create", { kind: "hang", afterProcessing: true });
    await expect(carrier(300).createShipment({ orderId, address: customer, lines })).rejects.toThrow();
    expect(withReference(reference)).toHaveLength(1);
    expect(await ids.recorded(reference)).toBeNull();

    const booking = await carrier().createShipment({ orderId, address: customer, lines });
    expect(withReference(reference)).toHaveLength(1);
    expect(booking.providerId).toBe(withReference(reference)[0]?.id);
    expect(await ids.recorded(reference)).toBe(booking.providerId);
    expect(chargedFor(reference)).toEqual({ labels: 1, postageCharges: 1, buys: 1 });
  });

  it("buy answered but lost: the retry reads the recorded shipment by id, finds it bought, buys nothing", async () => {
    const orderId = nextId();
    const reference = easyPostReference(orderId);
    sandbox.injectFailure("shipments.buy", { kind: "hang", afterProcessing: true });
    await expect(carrier(300).createShipment({ orderId, address: customer, lines })).rejects.toThrow();
    const [bought] = withReference(reference);
    expect(bought?.postage_label).not.toBeNull();
    expect(await ids.recorded(reference)).toBe(bought?.id);

    const booking = await carrier().createShipment({ orderId, address: customer, lines });
    expect(booking).toMatchObject({ providerId: bought?.id, trackingNumber: bought?.tracking_code });
    expect(chargedFor(reference)).toEqual({ labels: 1, postageCharges: 1, buys: 1 });
  });

  it("buy answered but lost while the reference is not unique (an older shipment shares it): the retry buys nothing, where a lookup by reference would have bought the other", async () => {
    const orderId = nextId();
    const reference = easyPostReference(orderId);
    // The attempt's lookup misses; before its create lands, another shipment with the same
    // reference is made (a racing attempt, or a hand-made one): the older of the two.
    const creates = gate();
    sandbox.injectFailure("shipments.create", { kind: "held", until: creates.promise });
    sandbox.injectFailure("shipments.buy", { kind: "hang", afterProcessing: true });
    const lost = carrier(1_000).createShipment({ orderId, address: customer, lines });
    await eventually("the attempt's create is held at the stand-in", async () => {
      const { pending } = (await (await fetch(`${sandbox.url}/_sandbox/failures`)).json()) as {
        pending: { endpoint: string }[];
      };
      return !pending.some((rule) => rule.endpoint === "shipments.create");
    });
    const stray = await (
      await client()
    ).Shipment.create({
      reference,
      to_address: toEasyPostAddress(customer),
      from_address: toEasyPostAddress(warehouse),
      parcel: { weight: 16 },
    });
    creates.open();
    await expect(lost).rejects.toThrow();
    const recorded = await ids.recorded(reference);
    expect(recorded).not.toBe(stray.id);
    // What a lookup by reference answers now: the older, unbought one.
    expect((await (await client()).Shipment.retrieve(reference)).id).toBe(stray.id);

    const booking = await carrier().createShipment({ orderId, address: customer, lines });
    expect(booking.providerId).toBe(recorded);
    expect(withReference(reference)).toHaveLength(2);
    expect(chargedFor(reference)).toEqual({ labels: 1, postageCharges: 1, buys: 1 });
  });

  it("two attempts at once whose lookups both miss: each creates, the first claim wins, one label is bought", async () => {
    const orderId = nextId();
    const reference = easyPostReference(orderId);
    const creates = gate();
    sandbox.injectFailure("shipments.create", { kind: "held", until: creates.promise }, 2);
    const attempts = [
      carrier().createShipment({ orderId, address: customer, lines }),
      carrier().createShipment({ orderId, address: customer, lines }),
    ];
    await eventually(
      "both lookups by reference missed",
      () =>
        sandbox.requests.filter(
          (r) => r.endpoint === "shipments.retrieve" && r.status === 404 && r.path.endsWith(reference),
        ).length === 2,
    );
    creates.open();
    const [first, second] = await Promise.all(attempts);
    expect(first).toEqual(second);
    expect(withReference(reference)).toHaveLength(2);
    expect(chargedFor(reference)).toEqual({ labels: 1, postageCharges: 1, buys: 1 });
  });

  it("a return label: create lost, then buy lost, each retried: one label", async () => {
    const returnId = nextId();
    const reference = returnLabelReference(returnId);
    const labels = (timeoutMs?: number) =>
      createEasyPostReturnLabels({
        client: () => client(timeoutMs),
        warehouse,
        serviceLevels: ["GroundAdvantage"],
        itemWeightOz: 16,
        shipmentIds: ids,
      });
    sandbox.injectFailure("shipments.create", { kind: "hang", afterProcessing: true });
    await expect(labels(300).buy({ returnId, address: customer, lines })).rejects.toThrow();
    sandbox.injectFailure("shipments.buy", { kind: "hang", afterProcessing: true });
    await expect(labels(300).buy({ returnId, address: customer, lines })).rejects.toThrow();
    const booking = await labels().buy({ returnId, address: customer, lines });
    expect(withReference(reference)).toHaveLength(1);
    expect(booking.providerId).toBe(withReference(reference)[0]?.id);
    expect(chargedFor(reference)).toEqual({ labels: 1, postageCharges: 1, buys: 1 });
  });
});
