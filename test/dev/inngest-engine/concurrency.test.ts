import { Harness } from "./fixtures/harness";

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("local Inngest engine: concurrency", () => {
  let harness: Harness;
  const active = new Map<string, number>();
  const maxActive = new Map<string, number>();
  let pairActive = 0;
  const met: boolean[] = [];

  /** Tracks how many steps of a key execute at the same time. */
  const executing = async (key: string, work: () => Promise<void>): Promise<void> => {
    active.set(key, (active.get(key) ?? 0) + 1);
    maxActive.set(key, Math.max(maxActive.get(key) ?? 0, active.get(key) ?? 0));
    try {
      await work();
    } finally {
      active.set(key, (active.get(key) ?? 1) - 1);
    }
  };

  beforeAll(async () => {
    harness = await Harness.start({
      functions: (inngest) => [
        inngest.createFunction(
          {
            id: "per-customer",
            concurrency: { limit: 1, key: "event.data.customer" },
            triggers: [{ event: "test/serial" }],
          },
          async ({ event, step }) => {
            const customer = (event.data as { customer: string }).customer;
            await step.run("a", () => executing(customer, () => pause(15)));
            await step.run("b", () => executing(customer, () => pause(15)));
            return customer;
          },
        ),
        inngest.createFunction(
          {
            id: "pair",
            concurrency: { limit: 1, key: "event.data.customer" },
            triggers: [{ event: "test/pair" }],
          },
          async ({ step }) => {
            // Each run waits (bounded) until the other run's step executes too: only possible in parallel.
            const together = await step.run("meet", async () => {
              pairActive++;
              const deadline = Date.now() + 3_000;
              while (pairActive < 2 && Date.now() < deadline) await pause(5);
              await pause(20);
              pairActive--;
              return pairActive >= 0 && Date.now() < deadline;
            });
            met.push(together);
          },
        ),
        inngest.createFunction(
          {
            id: "sleepy-holder",
            concurrency: { limit: 1, key: "event.data.customer" },
            triggers: [{ event: "test/holder" }],
          },
          async ({ step }) => {
            await step.run("before", () => "held");
            await step.sleep("long-nap", "1h");
            return step.run("after", () => "done");
          },
        ),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  test("steps of runs with the same key never overlap; other keys keep running", async () => {
    await harness.send([
      { name: "test/serial", data: { customer: "c1" } },
      { name: "test/serial", data: { customer: "c1" } },
      { name: "test/serial", data: { customer: "c1" } },
      { name: "test/serial", data: { customer: "c2" } },
    ]);
    await harness.engine.drain();
    const runs = await harness.runsOfFunction("engine-test-per-customer");
    expect(runs.map((r) => r.status)).toEqual(["Completed", "Completed", "Completed", "Completed"]);
    expect(maxActive.get("c1")).toBe(1);
    expect(maxActive.get("c2")).toBe(1);
  });

  test("steps of runs with different keys do overlap", async () => {
    await harness.send([
      { name: "test/pair", data: { customer: "k1" } },
      { name: "test/pair", data: { customer: "k2" } },
    ]);
    await harness.engine.drain();
    expect(met).toEqual([true, true]);
  });

  test("a sleeping run holds no concurrency slot", async () => {
    const [holder] = await harness.send({ name: "test/holder", data: { customer: "same" } });
    await harness.engine.drain();
    const [second] = await harness.send({ name: "test/holder", data: { customer: "same" } });
    await harness.engine.drain();
    expect((await harness.onlyRunOf(holder as string)).pending).toEqual([
      expect.objectContaining({ kind: "sleep" }),
    ]);
    expect((await harness.onlyRunOf(second as string)).pending).toEqual([
      expect.objectContaining({ kind: "sleep" }),
    ]);
    await harness.engine.clock.advance(3_600_000);
    expect((await harness.onlyRunOf(holder as string)).status).toBe("Completed");
    expect((await harness.onlyRunOf(second as string)).status).toBe("Completed");
  });
});
