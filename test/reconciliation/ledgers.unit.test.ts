import type Stripe from "stripe";
import { createEasyPostLedger, type EasyPostShipmentShape } from "../../src/reconciliation/carrier-ledger";
import type { ShopDay } from "../../src/reconciliation/shop-day";
import { createStripeLedger } from "../../src/reconciliation/stripe-ledger";
import type { EasyPost } from "../../src/shipping/easypost-carrier";

/**
 * The two ledgers the reconciliation reads (src/reconciliation/stripe-ledger.ts, carrier-ledger.ts)
 * over in-memory Stripe and EasyPost clients that answer as theirs do: Stripe's balance transactions
 * in pages of `limit` after `starting_after`, its refunds and disputes by id (`resource_missing`
 * when there is none), its dispute list auto-paginated; EasyPost's shipments by page, by id (404
 * when there is none). What each was asked is kept: the day's bounds, the page size, the expansions.
 */

// A day in New York: its bounds are not UTC midnights, so a bound taken from the wrong end shows.
const day: ShopDay = {
  date: "2026-12-05",
  timeZone: "America/New_York",
  start: new Date("2026-12-05T05:00:00Z"),
  end: new Date("2026-12-06T05:00:00Z"),
};
const startUnix = Date.parse("2026-12-05T05:00:00Z") / 1000;
const endUnix = Date.parse("2026-12-06T05:00:00Z") / 1000;

const notFound = (code: string) => Object.assign(new Error("No such object"), { code });

function fakeStripe(transactions: number, disputes: { id: string; status: string }[] = []) {
  const ledger = Array.from({ length: transactions }, (_, i) => ({ id: `txn_${i}`, amount: i }));
  const asked: Record<string, unknown[]> = {
    transactions: [],
    refunds: [],
    disputes: [],
    sessions: [],
    lists: [],
  };
  const refunds = new Map<string, unknown>([["re_1", { id: "re_1", amount: 700 }]]);
  const knownDisputes = new Map<string, unknown>([["dp_1", { id: "dp_1" }]]);
  const sessions = new Map<string, unknown>([["cs_1", { id: "cs_1" }]]);
  const retrieve = (kind: string, found: Map<string, unknown>) => async (id: string, params?: unknown) => {
    asked[kind]?.push(params === undefined ? id : [id, params]);
    if (id === "boom") throw Object.assign(new Error("Stripe is down"), { code: "api_error" });
    const value = found.get(id);
    if (!value) throw notFound("resource_missing");
    return value;
  };
  const stripe = {
    balanceTransactions: {
      list: async (params: { limit: number; starting_after?: string }) => {
        asked.transactions?.push(params);
        const from = params.starting_after ? ledger.findIndex((t) => t.id === params.starting_after) + 1 : 0;
        const data = ledger.slice(from, from + params.limit);
        return { object: "list", data, has_more: from + params.limit < ledger.length };
      },
    },
    refunds: { retrieve: retrieve("refunds", refunds) },
    disputes: {
      retrieve: retrieve("disputes", knownDisputes),
      list: (params: unknown) => {
        asked.lists?.push(params);
        return (async function* () {
          yield* disputes;
        })();
      },
    },
    checkout: { sessions: { retrieve: retrieve("sessions", sessions) } },
  };
  return { stripe: stripe as unknown as Stripe, asked };
}

const collect = async <T>(pages: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const page of pages) all.push(page);
  return all;
};

describe("the Stripe ledger", () => {
  it("reads the day's balance transactions 100 at a time, after the last of each page", async () => {
    const { stripe, asked } = fakeStripe(250);
    const pages = await collect(createStripeLedger(stripe).transactionPages(day));
    expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
    expect(pages.flat().map((t) => t.id)).toEqual(Array.from({ length: 250 }, (_, i) => `txn_${i}`));
    const query = { created: { gte: startUnix, lt: endUnix }, limit: 100, expand: ["data.source"] };
    expect(asked.transactions).toEqual([
      query,
      { ...query, starting_after: "txn_99" },
      { ...query, starting_after: "txn_199" },
    ]);
  });

  it("a day of exactly one page asks once more only when Stripe says there is more", async () => {
    const { stripe, asked } = fakeStripe(100);
    expect((await collect(createStripeLedger(stripe).transactionPages(day))).map((p) => p.length)).toEqual([
      100,
    ]);
    expect(asked.transactions).toHaveLength(1);
  });

  it("an empty day yields no page", async () => {
    const { stripe, asked } = fakeStripe(0);
    expect(await collect(createStripeLedger(stripe).transactionPages(day))).toEqual([]);
    expect(asked.transactions).toHaveLength(1);
  });

  it("an empty page that says there is more ends the day rather than asking from the start again", async () => {
    const { stripe } = fakeStripe(0);
    let calls = 0;
    (stripe.balanceTransactions as unknown as { list: () => Promise<unknown> }).list = async () => {
      calls += 1;
      return { data: [], has_more: true };
    };
    expect(await collect(createStripeLedger(stripe).transactionPages(day))).toEqual([]);
    expect(calls).toBe(1);
  });

  it("is live only when told so (the wiring reads it off the secret key)", () => {
    const { stripe } = fakeStripe(0);
    expect(createStripeLedger(stripe).livemode).toBe(false);
    expect(createStripeLedger(stripe, { livemode: true }).livemode).toBe(true);
  });

  it("a refund, a dispute and a session by id; null when Stripe has none; any other failure thrown", async () => {
    const { stripe, asked } = fakeStripe(0);
    const ledger = createStripeLedger(stripe);
    expect(await ledger.refund("re_1")).toEqual({ id: "re_1", amount: 700 });
    expect(await ledger.refund("re_none")).toBeNull();
    await expect(ledger.refund("boom")).rejects.toThrow("Stripe is down");
    expect(await ledger.dispute("dp_1")).toEqual({ id: "dp_1" });
    expect(await ledger.dispute("dp_none")).toBeNull();
    await expect(ledger.dispute("boom")).rejects.toThrow("Stripe is down");
    const checkoutSession = ledger.checkoutSession?.bind(ledger);
    expect(await checkoutSession?.("cs_1")).toEqual({ id: "cs_1" });
    expect(await checkoutSession?.("cs_none")).toBeNull();
    await expect(checkoutSession?.("boom")).rejects.toThrow("Stripe is down");
    expect(asked.sessions?.[0]).toEqual([
      "cs_1",
      { expand: ["line_items.data.price.product", "shipping_cost.shipping_rate"] },
    ]);
  });

  it("open disputes: the 180 days before the day's end, only those still open", async () => {
    const statuses = [
      "warning_needs_response",
      "warning_under_review",
      "needs_response",
      "under_review",
      "won",
      "lost",
      "warning_closed",
      "prevented",
    ];
    const { stripe, asked } = fakeStripe(
      0,
      statuses.map((status) => ({ id: `dp_${status}`, status })),
    );
    const open = await collect(createStripeLedger(stripe).openDisputes(day.end));
    expect(open.map((d) => d.id)).toEqual(statuses.slice(0, 4).map((status) => `dp_${status}`));
    expect(asked.lists).toEqual([{ created: { gte: endUnix - 180 * 86_400, lt: endUnix }, limit: 100 }]);
  });

  it("a bound that is not on a whole second is rounded down", async () => {
    const { stripe, asked } = fakeStripe(0);
    await collect(createStripeLedger(stripe).openDisputes(new Date(day.end.getTime() + 999)));
    expect(asked.lists).toEqual([{ created: { gte: endUnix - 180 * 86_400, lt: endUnix }, limit: 100 }]);
  });
});

type Shape = EasyPostShipmentShape;

function fakeEasyPost(shipments: Shape[], options: { endWith?: "error" | "empty" } = {}) {
  const asked: { all: unknown[]; next: unknown[]; retrieve: string[]; clients: number } = {
    all: [],
    next: [],
    retrieve: [],
    clients: 0,
  };
  const pageOf = (from: number, size: number) => {
    const page = shipments.slice(from, from + size);
    const hasMore = from + size < shipments.length || options.endWith !== undefined;
    return { shipments: page, has_more: hasMore, from };
  };
  const client = {
    Shipment: {
      all: async (params: { page_size: number }) => {
        asked.all.push(params);
        return pageOf(0, params.page_size);
      },
      getNextPage: async (page: { from: number; shipments: Shape[] }, size: number) => {
        asked.next.push(size);
        const from = page.from + page.shipments.length;
        if (from >= shipments.length && options.endWith === "error") {
          throw Object.assign(new Error("There are no more pages to retrieve."), {
            name: "EndOfPaginationError",
          });
        }
        if (from >= shipments.length) return { shipments: [], has_more: true, from };
        return pageOf(from, size);
      },
      retrieve: async (id: string) => {
        asked.retrieve.push(id);
        if (id === "boom") throw Object.assign(new Error("EasyPost is down"), { statusCode: 500 });
        const found = shipments.find((s) => s.id === id || s.reference === id);
        if (!found) throw Object.assign(new Error("not found"), { statusCode: 404 });
        return found;
      },
    },
  };
  return {
    ledger: createEasyPostLedger(async () => {
      asked.clients += 1;
      return client as unknown as EasyPost;
    }),
    asked,
  };
}

const shipment = (i: number, fields: Partial<Shape> = {}): Shape => ({
  id: `shp_${i}`,
  created_at: "2026-12-05T12:00:00Z",
  ...fields,
});

describe("the EasyPost ledger", () => {
  it("reads the day's bought labels 100 at a time until EasyPost has no more", async () => {
    const { ledger, asked } = fakeEasyPost(Array.from({ length: 230 }, (_, i) => shipment(i)));
    expect(ledger.name).toBe("easypost");
    const pages = await collect(ledger.shipmentPages(day));
    expect(pages.map((page) => page.length)).toEqual([100, 100, 30]);
    expect(pages.flat().map((s) => s.id)).toEqual(Array.from({ length: 230 }, (_, i) => `shp_${i}`));
    expect(asked.all).toEqual([
      {
        start_datetime: "2026-12-05T05:00:00.000Z",
        end_datetime: "2026-12-06T04:59:59.999Z",
        page_size: 100,
        purchased: true,
      },
    ]);
    expect(asked.next).toEqual([100, 100]);
  });

  it("stops when the client says there is no next page, or hands back an empty one", async () => {
    const ended = fakeEasyPost([shipment(1), shipment(2)], { endWith: "error" });
    expect((await collect(ended.ledger.shipmentPages(day))).flat().map((s) => s.id)).toEqual([
      "shp_1",
      "shp_2",
    ]);
    expect(ended.asked.next).toHaveLength(1);
    const empty = fakeEasyPost([shipment(1)], { endWith: "empty" });
    expect((await collect(empty.ledger.shipmentPages(day))).map((page) => page.length)).toEqual([1]);
    expect(empty.asked.next).toHaveLength(1);
  });

  it("an empty day yields no page and asks for no other", async () => {
    const { ledger, asked } = fakeEasyPost([], { endWith: "empty" });
    expect(await collect(ledger.shipmentPages(day))).toEqual([]);
    expect(asked.next).toEqual([]);
  });

  it("any other failure of a next page is thrown", async () => {
    const client = {
      Shipment: {
        all: async () => ({ shipments: [shipment(1)], has_more: true }),
        getNextPage: async () => {
          throw Object.assign(new Error("EasyPost is down"), { name: "ApiError" });
        },
      },
    };
    const failing = createEasyPostLedger(async () => client as unknown as EasyPost);
    await expect(collect(failing.shipmentPages(day))).rejects.toThrow("EasyPost is down");
  });

  it("a label as the reconciliation compares it: rate, refund status, whether its postage is charged", async () => {
    const { ledger } = fakeEasyPost([
      shipment(1, {
        reference: "order-1",
        tracking_code: "TRK-1",
        selected_rate: { rate: "7.50", currency: "USD" },
        refund_status: "rejected",
        fees: [
          { type: "LabelFee", charged: true },
          { type: "PostageFee", charged: false },
        ],
      }),
      shipment(2, { fees: [{ type: "LabelFee", charged: false }] }),
      shipment(3, { fees: [{ type: "PostageFee", charged: true }] }),
    ]);
    const [page] = await collect(ledger.shipmentPages(day));
    expect(page).toEqual([
      {
        id: "shp_1",
        reference: "order-1",
        trackingCode: "TRK-1",
        rate: { amount: "7.50", currency: "USD" },
        refundStatus: "rejected",
        postageCharged: false,
        createdAt: "2026-12-05T12:00:00Z",
      },
      {
        id: "shp_2",
        reference: null,
        trackingCode: null,
        rate: null,
        refundStatus: null,
        postageCharged: true,
        createdAt: "2026-12-05T12:00:00Z",
      },
      expect.objectContaining({ id: "shp_3", postageCharged: true }),
    ]);
  });

  it("a label by id or reference; null when EasyPost has none; any other failure thrown", async () => {
    const { ledger, asked } = fakeEasyPost([shipment(1, { reference: "order-1" })]);
    expect(await ledger.shipment("shp_1")).toMatchObject({ id: "shp_1", reference: "order-1" });
    expect(await ledger.shipment("order-1")).toMatchObject({ id: "shp_1" });
    expect(await ledger.shipment("shp_none")).toBeNull();
    await expect(ledger.shipment("boom")).rejects.toThrow("EasyPost is down");
    expect(asked.retrieve).toEqual(["shp_1", "order-1", "shp_none", "boom"]);
  });
});
