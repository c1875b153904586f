import { Inngest } from "inngest";
import {
  createRecoverStalledReturns,
  maxReturnsPerRun,
  recoverStalledReturnsCron,
} from "../../src/inngest/functions/recover-stalled-returns";
import {
  exchangePaidEvent,
  returnApprovedEvent,
  returnCancelledEvent,
  returnReceivedEvent,
} from "../../src/events/contracts";
import type { ReAnnouncement, StalledReturn, StalledReturns } from "../../src/returns/stalled-returns";
import { FakeReturnWorld } from "../support/fakes/returns";
import { runFunction } from "../support/fakes/step-driver";
import { FakeWorkflowWorld } from "../support/fakes/workflow";

/**
 * The sweep of returns whose event was lost (recover-stalled-returns) on the step driver, its
 * finders in memory: a return never started gets its shop/return.requested again under the
 * return's own event id and one alert; a decision not heard gets its event again, by state, with
 * nothing said to ops. The finders' SQL (src/returns/stalled-returns.ts) is the `returns` group's,
 * against a real database (test/workflow/return-recovery.test.ts).
 */

const now = Date.parse("2026-12-07T10:00:00.000Z");
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
const orderA = "00000000-0000-4000-8000-0000000000aa";
const orderB = "00000000-0000-4000-8000-0000000000bb";

class FakeStalled {
  unstarted: StalledReturn[] = [];
  unheard: ReAnnouncement[] = [];
  readonly asked: { finder: string; olderThan: string; limit: number }[] = [];
  /** Throws on the first this many reads (the database away for a moment). */
  failures = 0;

  port(): StalledReturns {
    return {
      markRunStarted: async () => undefined,
      findUnstarted: async (olderThan, limit) => {
        if (this.failures > 0) {
          this.failures -= 1;
          throw new Error("connection terminated");
        }
        this.asked.push({ finder: "unstarted", olderThan: olderThan.toISOString(), limit });
        return this.unstarted.slice(0, limit);
      },
      findUnheard: async (olderThan, limit) => {
        this.asked.push({ finder: "unheard", olderThan: olderThan.toISOString(), limit });
        return this.unheard.slice(0, limit);
      },
    };
  }
}

function setup(options: { stalled?: FakeStalled | null } = {}) {
  const world = new FakeWorkflowWorld();
  const stalled = options.stalled === undefined ? new FakeStalled() : options.stalled;
  const returns = new FakeReturnWorld({ lines: [{ sku: "TEE-M", quantity: 1, unitPrice: 2500 }] });
  const fn = createRecoverStalledReturns(new Inngest({ id: "shop", isDev: true }), {
    ...world.dependencies(),
    returns: { ...returns.dependencies(), ...(stalled ? { stalled: stalled.port() } : {}) },
  });
  const run = () =>
    runFunction(
      fn,
      { name: "inngest/scheduled.timer", data: { cron: recoverStalledReturnsCron } },
      { runId: "sweep-1" },
    );
  return { world, stalled: stalled ?? new FakeStalled(), fn, run, returns };
}

const sent = (outcome: Awaited<ReturnType<ReturnType<typeof setup>["run"]>>) =>
  outcome.steps.filter((step) => step.kind === "sendEvent");

beforeEach(() => {
  jest.spyOn(Date, "now").mockReturnValue(now);
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe("recover-stalled-returns (fast tier)", () => {
  it("is a cron, one run at a time, retried", () => {
    const { fn } = setup();
    const opts = (fn as unknown as { opts: Record<string, unknown> }).opts;

    expect(opts).toMatchObject({
      id: "recover-stalled-returns",
      triggers: [{ cron: recoverStalledReturnsCron }],
      concurrency: { limit: 1 },
      retries: 3,
    });
    expect(opts["name"]).toEqual(expect.any(String));
    expect((opts["name"] as string).length).toBeGreaterThan(0);
  });

  it("with no stalled-returns port (returns not wired) does nothing", async () => {
    const { world, run } = setup({ stalled: null });

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { started: 0, reAnnounced: 0 }, steps: [] });
    expect(world.notices).toEqual([]);
  });

  it("with no returns wired at all does nothing", async () => {
    const world = new FakeWorkflowWorld();
    const fn = createRecoverStalledReturns(new Inngest({ id: "shop", isDev: true }), world.dependencies());

    const outcome = await runFunction(fn, { name: "inngest/scheduled.timer", data: {} });

    expect(outcome).toMatchObject({ status: "completed", result: { started: 0, reAnnounced: 0 }, steps: [] });
    expect(world.notices).toEqual([]);
  });

  it("with nothing stalled: asks both finders for returns older than the grace, at most 200 each, and sends nothing", async () => {
    const { world, stalled, run } = setup();

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { started: 0, reAnnounced: 0 } });
    expect(outcome.steps.map((step) => step.id)).toEqual(["find-stalled-returns"]);
    expect(stalled.asked).toEqual([
      { finder: "unstarted", olderThan: "2026-12-07T09:55:00.000Z", limit: maxReturnsPerRun },
      { finder: "unheard", olderThan: "2026-12-07T09:55:00.000Z", limit: maxReturnsPerRun },
    ]);
    expect(maxReturnsPerRun).toBe(200);
    expect(world.notices).toEqual([]);
    expect(world.timelineEntries).toEqual([]);
  });

  it("starts every return never started again under its own event id, with one alert and one entry per return", async () => {
    const { world, stalled, run } = setup();
    stalled.unstarted = [
      { returnId: id(1), orderId: orderA, status: "approved" },
      { returnId: id(2), orderId: orderB, status: "requested" },
    ];

    const outcome = await run();

    expect(outcome).toMatchObject({
      status: "completed",
      result: { started: 2, returnIds: [id(1), id(2)], reAnnounced: 0 },
    });
    expect(outcome.steps.map((step) => step.id)).toEqual([
      "find-stalled-returns",
      "send-stalled-return-events",
      "tell-returns-recovered",
    ]);
    expect(sent(outcome)[0]?.detail).toEqual([
      {
        id: `return-requested-${id(1)}`,
        name: "shop/return.requested",
        data: { returnId: id(1), orderId: orderA },
      },
      {
        id: `return-requested-${id(2)}`,
        name: "shop/return.requested",
        data: { returnId: id(2), orderId: orderB },
      },
    ]);
    expect(world.notices.map((notice) => notice.key)).toEqual([
      `return-rescued-${id(1)}`,
      `return-rescued-${id(2)}`,
    ]);
    expect(world.notices[0]?.fields).toMatchObject({ orderId: orderA, returnId: id(1), status: "approved" });
    expect(
      world.timelineEntries.map(({ orderId, kind, detail, runId }) => ({ orderId, kind, detail, runId })),
    ).toEqual([
      {
        orderId: orderA,
        kind: "return-run-recovered",
        detail: { returnId: id(1), status: "approved" },
        runId: "sweep-1",
      },
      {
        orderId: orderB,
        kind: "return-run-recovered",
        detail: { returnId: id(2), status: "requested" },
        runId: "sweep-1",
      },
    ]);
  });

  it("sends a decision not heard again by its state, under the event's own id, and tells ops nothing", async () => {
    const { world, stalled, run } = setup();
    const ids = (n: number, orderId = orderA) => ({ returnId: id(n), orderId });
    stalled.unheard = [
      { ...ids(3), event: returnApprovedEvent(ids(3)) },
      { ...ids(4), event: returnReceivedEvent({ ...ids(4), condition: "damaged" }) },
      { ...ids(5, orderB), event: returnCancelledEvent({ ...ids(5, orderB), reason: "rejected" }) },
      { ...ids(6), event: exchangePaidEvent({ ...ids(6), checkoutSessionId: "cs_6" }) },
    ];

    const outcome = await run();

    expect(outcome).toMatchObject({
      status: "completed",
      result: { started: 0, returnIds: [], reAnnounced: 4 },
    });
    expect(outcome.steps.map((step) => step.id)).toEqual([
      "find-stalled-returns",
      "send-stalled-return-events",
    ]);
    expect(sent(outcome)[0]?.detail).toEqual(
      stalled.unheard.map(({ event }) => ({ id: event.id, name: event.name, data: event.data })),
    );
    expect((sent(outcome)[0]?.detail as { id: string }[]).map((event) => event.id)).toEqual([
      `return-approved-${id(3)}`,
      `return-received-${id(4)}`,
      `return-cancelled-${id(5)}`,
      expect.stringContaining("cs_6"),
    ]);
    expect(world.notices).toEqual([]);
    expect(world.timelineEntries).toEqual([]);
  });

  it("both kinds in one run: the starts first, then the re-announcements, in one send; alerts only for the starts", async () => {
    const { world, stalled, run } = setup();
    stalled.unstarted = [{ returnId: id(1), orderId: orderA, status: "received" }];
    stalled.unheard = [
      { returnId: id(2), orderId: orderA, event: returnApprovedEvent({ returnId: id(2), orderId: orderA }) },
    ];

    const outcome = await run();

    expect(outcome).toMatchObject({ result: { started: 1, returnIds: [id(1)], reAnnounced: 1 } });
    expect(sent(outcome)).toHaveLength(1);
    expect((sent(outcome)[0]?.detail as { id: string }[]).map((event) => event.id)).toEqual([
      `return-requested-${id(1)}`,
      `return-approved-${id(2)}`,
    ]);
    expect(world.notices.map((notice) => notice.key)).toEqual([`return-rescued-${id(1)}`]);
  });

  it("sends only an event's id, name and data (nothing else the finder's event carries)", async () => {
    const { stalled, run } = setup();
    const event = { ...returnApprovedEvent({ returnId: id(7), orderId: orderA }), ts: 1, user: { by: "x" } };
    stalled.unheard = [{ returnId: id(7), orderId: orderA, event }];

    const outcome = await run();

    expect(sent(outcome)[0]?.detail).toEqual([
      {
        id: `return-approved-${id(7)}`,
        name: "shop/return.approved",
        data: { returnId: id(7), orderId: orderA },
      },
    ]);
  });

  it("a finder failing for a moment is retried by the step, and the sweep goes on", async () => {
    const { stalled, run } = setup();
    stalled.failures = 2;
    stalled.unstarted = [{ returnId: id(1), orderId: orderA, status: "approved" }];

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { started: 1 } });
    expect(outcome.steps[0]).toMatchObject({ id: "find-stalled-returns", detail: 3 });
  });
});
