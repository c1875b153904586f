import { Harness } from "./fixtures/harness";

const hour = 3_600_000;

describe("local Inngest engine: sleeps, waits, events, cancellation, cron, dedupe", () => {
  let harness: Harness;
  const executed: Record<string, number> = {};
  const bump = (key: string): void => {
    executed[key] = (executed[key] ?? 0) + 1;
  };

  beforeAll(async () => {
    harness = await Harness.start({
      functions: (inngest) => [
        inngest.createFunction({ id: "sleeper", triggers: [{ event: "test/sleep" }] }, async ({ step }) => {
          await step.run("before", () => bump("sleeper.before"));
          await step.sleep("nap", "2h");
          return step.run("after", () => "woke up");
        }),
        inngest.createFunction({ id: "waiter", triggers: [{ event: "test/wait" }] }, async ({ step }) => {
          const paid = await step.waitForEvent("wait-for-payment", {
            event: "test/paid",
            timeout: "1h",
            if: "async.data.orderId == event.data.orderId",
          });
          return paid ? { paidAmount: (paid.data as { amount: number }).amount } : "timed out";
        }),
        inngest.createFunction(
          { id: "sender", triggers: [{ event: "test/send" }] },
          async ({ event, step }) => {
            await step.sendEvent("notify", {
              name: "test/notified",
              data: { orderId: (event.data as { orderId: string }).orderId },
            });
            return "sent";
          },
        ),
        inngest.createFunction(
          { id: "notified", triggers: [{ event: "test/notified", if: "event.data.orderId != 'ignored'" }] },
          async ({ event }) => {
            return `notified ${(event.data as { orderId: string }).orderId}`;
          },
        ),
        inngest.createFunction(
          {
            id: "cancellable",
            triggers: [{ event: "test/order" }],
            cancelOn: [
              {
                event: "test/order.cancelled",
                if: "async.data.orderId == event.data.orderId",
                timeout: "1d",
              },
            ],
          },
          async ({ step }) => {
            await step.sleep("cooling-off", "1h");
            await step.run("ship", () => bump("cancellable.ship"));
            return "shipped";
          },
        ),
        inngest.createFunction(
          {
            id: "on-cancel",
            triggers: [
              {
                event: "inngest/function.cancelled",
                if: "event.data.function_id == 'engine-test-cancellable'",
              },
            ],
          },
          async ({ event }) => ({ cleaned: (event.data as { run_id: string }).run_id }),
        ),
        inngest.createFunction(
          { id: "idempotent", idempotency: "event.data.orderId", triggers: [{ event: "test/idem" }] },
          async ({ event }) => {
            return (event.data as { orderId: string }).orderId;
          },
        ),
        inngest.createFunction({ id: "hourly", triggers: [{ cron: "0 * * * *" }] }, async ({ event }) => {
          bump("hourly");
          return event.name;
        }),
        inngest.createFunction(
          { id: "counted", triggers: [{ event: "test/counted" }] },
          async () => "counted",
        ),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  test("sleeps on the engine clock and resumes without re-running earlier steps", async () => {
    const [eventId] = await harness.send({ name: "test/sleep" });
    await harness.engine.drain();
    let run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Running");
    expect(run.pending).toEqual([expect.objectContaining({ kind: "sleep", name: "nap" })]);

    await harness.engine.clock.advance(hour);
    expect((await harness.onlyRunOf(eventId as string)).status).toBe("Running");
    await harness.engine.clock.advance(hour);
    run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("woke up");
    expect(executed["sleeper.before"]).toBe(1);
  });

  test("waitForEvent resumes with the matching event only", async () => {
    const [eventId] = await harness.send({ name: "test/wait", data: { orderId: "A" } });
    await harness.engine.drain();
    await harness.send({ name: "test/paid", data: { orderId: "B", amount: 1 } });
    await harness.engine.drain();
    expect((await harness.onlyRunOf(eventId as string)).status).toBe("Running");

    await harness.send({ name: "test/paid", data: { orderId: "A", amount: 42 } });
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toEqual({ paidAmount: 42 });
  });

  test("waitForEvent resolves null when it times out", async () => {
    const [eventId] = await harness.send({ name: "test/wait", data: { orderId: "C" } });
    await harness.engine.drain();
    await harness.engine.clock.advance(hour + 1_000);
    await harness.send({ name: "test/paid", data: { orderId: "C", amount: 5 } });
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("timed out");
  });

  test("step.sendEvent triggers another function (honouring its if expression)", async () => {
    const [eventId] = await harness.send([
      { name: "test/send", data: { orderId: "S-1" } },
      { name: "test/send", data: { orderId: "ignored" } },
    ]);
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.steps).toEqual([expect.objectContaining({ name: "notify", op: "SendEvent" })]);
    const notified = await harness.runsOfFunction("engine-test-notified");
    expect(notified.map((r) => r.output)).toEqual(["notified S-1"]);
  });

  test("cancelOn cancels a sleeping run and emits inngest/function.cancelled", async () => {
    const [keepId, cancelId] = await harness.send([
      { name: "test/order", data: { orderId: "keep" } },
      { name: "test/order", data: { orderId: "drop" } },
    ]);
    await harness.engine.drain();
    await harness.send({ name: "test/order.cancelled", data: { orderId: "drop" } });
    await harness.engine.clock.advance(hour);

    const cancelled = await harness.onlyRunOf(cancelId as string);
    expect(cancelled.status).toBe("Cancelled");
    expect((await harness.onlyRunOf(keepId as string)).status).toBe("Completed");
    expect(executed["cancellable.ship"]).toBe(1);

    const { body } = await harness.api<{ data: { payload?: unknown; data: Record<string, unknown> }[] }>(
      "/v1/events?name=inngest/function.cancelled",
    );
    expect(body.data.map((e) => e.data)).toEqual([
      {
        function_id: "engine-test-cancellable",
        run_id: cancelled.run_id,
        event: expect.objectContaining({ name: "test/order", data: { orderId: "drop" } }),
      },
    ]);
    const cleanups = await harness.runsOfFunction("engine-test-on-cancel");
    expect(cleanups.map((r) => r.output)).toEqual([{ cleaned: cancelled.run_id }]);
  });

  test("DELETE /v1/runs/:id cancels a run", async () => {
    const [eventId] = await harness.send({ name: "test/order", data: { orderId: "rest" } });
    await harness.engine.drain();
    const [run] = await harness.runsOf(eventId as string);
    const { status, body } = await harness.api<{ data: { status: string } }>(`/v1/runs/${run?.run_id}`, {
      method: "DELETE",
    });
    expect(status).toBe(200);
    expect(body.data.status).toBe("Cancelled");
  });

  test("an idempotency key allows one run per key for 24 hours", async () => {
    const first = await harness.send([
      { name: "test/idem", data: { orderId: "I-1" } },
      { name: "test/idem", data: { orderId: "I-1" } },
      { name: "test/idem", data: { orderId: "I-2" } },
    ]);
    await harness.engine.drain();
    const counts = await Promise.all(first.map(async (id) => (await harness.runsOf(id)).length));
    expect(counts).toEqual([1, 0, 1]);

    await harness.engine.clock.advance(25 * hour);
    const [later] = await harness.send({ name: "test/idem", data: { orderId: "I-1" } });
    expect(await harness.onlyRunOf(later as string)).toMatchObject({ status: "Completed", output: "I-1" });
  });

  test("events with the same id are deduplicated for 24 hours and counted as received", async () => {
    const ids = await harness.send([
      { name: "test/counted", id: "evt-1" },
      { name: "test/counted", id: "evt-1" },
      { name: "test/counted", id: "evt-2" },
    ]);
    await harness.engine.drain();
    expect(await Promise.all(ids.map(async (id) => (await harness.runsOf(id)).length))).toEqual([1, 0, 1]);

    await harness.engine.clock.advance(25 * hour);
    const [again] = await harness.send({ name: "test/counted", id: "evt-1" });
    expect((await harness.onlyRunOf(again as string)).status).toBe("Completed");

    const { body } = await harness.api<{
      received: number;
      accepted: number;
      data: { id: string; deduplicated: boolean }[];
    }>("/v1/events?name=test/counted");
    expect(body).toMatchObject({ received: 4, accepted: 3 });
    expect(body.data.map((e) => [e.id, e.deduplicated])).toEqual([
      ["evt-1", false],
      ["evt-1", true],
      ["evt-2", false],
      ["evt-1", false],
    ]);
    // The user id also finds the run(s) started by the accepted events.
    expect((await harness.runsOf("evt-2")).length).toBe(1);
  });

  test("cron triggers fire on the engine clock, once per due time", async () => {
    const before = executed.hourly ?? 0;
    const now = harness.engine.clock.now().getTime();
    const toNextHour = hour - (now % hour);
    await harness.engine.clock.advance(toNextHour + 1_000);
    expect(executed.hourly).toBe(before + 1);
    await harness.engine.clock.advance(10 * 60_000);
    expect(executed.hourly).toBe(before + 1);
    await harness.engine.clock.advance(hour);
    expect(executed.hourly).toBe(before + 2);
    const runs = await harness.runsOfFunction("engine-test-hourly");
    expect(runs.at(-1)).toMatchObject({ status: "Completed", output: "inngest/scheduled.timer" });
  });
});
