import { parcelsOf } from "../../src/inngest/steps/create-shipment";

/**
 * A run in flight across the deploy replays create-shipment's memoised output from before orders
 * had several parcels: `booking` alone. The run goes on with that one parcel.
 */
describe("create-shipment's output, old and new", () => {
  const notice = {
    carrier: "USPS",
    trackingNumber: "9400100000000000000001",
    trackingUrl: "https://t.example/1",
  };

  it("reads an output memoised before several parcels as its one parcel", () => {
    expect(parcelsOf({ booking: notice })).toEqual([notice]);
    expect(parcelsOf({ booking: null })).toEqual([]);
  });

  it("reads every parcel of a new output, parcel 1 first", () => {
    const second = { ...notice, trackingNumber: "9400100000000000000002", parcelNumber: 2 };
    expect(
      parcelsOf({
        booking: { ...notice, parcelNumber: 1 },
        parcels: [{ ...notice, parcelNumber: 1 }, second],
      }),
    ).toEqual([{ ...notice, parcelNumber: 1 }, second]);
  });
});
