import { AppError } from "../../src/errors";
import { previousShopDay, shopDay } from "../../src/reconciliation/shop-day";

describe("the shop's calendar day", () => {
  it("starts and ends at local midnight, across daylight-saving changes", () => {
    expect(shopDay("2026-03-29", "Europe/Paris")).toMatchObject({
      start: new Date("2026-03-28T23:00:00Z"),
      end: new Date("2026-03-29T22:00:00Z"), // a 23-hour day
    });
    expect(shopDay("2026-11-01", "America/New_York")).toMatchObject({
      start: new Date("2026-11-01T04:00:00Z"),
      end: new Date("2026-11-02T05:00:00Z"), // a 25-hour day
    });
    expect(shopDay("2026-12-01", "UTC")).toMatchObject({
      start: new Date("2026-12-01T00:00:00Z"),
      end: new Date("2026-12-02T00:00:00Z"),
    });
  });

  it("the cron's day is yesterday where the shop is", () => {
    expect(previousShopDay(new Date("2026-12-02T00:30:00Z"), "Asia/Tokyo").date).toBe("2026-12-01");
    expect(previousShopDay(new Date("2026-12-02T00:30:00Z"), "America/Los_Angeles").date).toBe("2026-11-30");
  });

  // "0050-01-01": a year below 100, which Date.UTC would read as 1950; the only one of these where
  // the year alone is what differs from the calendar's day.
  it.each([
    "2026-02-30",
    "2026-13-01",
    "2026-00-10",
    "2026-03-00",
    "0050-01-01",
    "26-01-01",
    "",
    undefined,
    20261201,
  ])("refuses %p, saying what it expects and what it got", (date) => {
    expect(() => shopDay(date, "UTC")).toThrow(AppError);
    expect(() => shopDay(date, "UTC")).toThrow(
      expect.objectContaining({
        code: "validation_failed",
        message: `date: expected a calendar day as YYYY-MM-DD, got ${String(date)}`,
      }),
    );
  });
});
