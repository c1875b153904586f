import { Harness } from "./fixtures/harness";

const second = 1_000;

/**
 * Inngest's debounce and batchEvents as the engine runs them (src/dev/inngest-engine/flow-control.ts),
 * on a frozen clock moved by hand: what runs start, when, and with which events.
 */
describe("local Inngest engine: debounce and batchEvents", () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await Harness.start({
      functions: (inngest) => [
        inngest.createFunction(
          {
            id: "debounced",
            triggers: [{ event: "test/debounce" }],
            debounce: { key: "event.data.group", period: "10s", timeout: "30s" },
          },
          async ({ event, events }) => {
            const data = event.data as { n: number; group: string };
            return { group: data.group, last: data.n, count: events.length };
          },
        ),
        inngest.createFunction(
          {
            id: "batched",
            triggers: [{ event: "test/batch" }],
            batchEvents: { maxSize: 3, timeout: "20s" },
          },
          async ({ events }) => events.map((e) => (e.data as { n: number }).n),
        ),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  const outputs = async (functionId: string) =>
    (await harness.runsOfFunction(`engine-test-${functionId}`))
      .filter((run) => run.status === "Completed")
      .map((run) => run.output);

  test("debounce: one run per key after the quiet period, with the last event", async () => {
    await harness.send({ name: "test/debounce", data: { group: "a", n: 1 } });
    await harness.engine.clock.advance(5 * second);
    await harness.send({ name: "test/debounce", data: { group: "a", n: 2 } });
    await harness.send({ name: "test/debounce", data: { group: "b", n: 9 } });
    // 10 s after the first event, but only 5 s after the second: nothing runs yet.
    await harness.engine.clock.advance(5 * second);
    expect(await outputs("debounced")).toEqual([]);

    await harness.engine.clock.advance(6 * second);
    expect(await outputs("debounced")).toEqual(
      expect.arrayContaining([
        { group: "a", last: 2, count: 1 },
        { group: "b", last: 9, count: 1 },
      ]),
    );
    expect(await outputs("debounced")).toHaveLength(2);
  });

  test("debounce: a steady stream still runs once its timeout passed since the first event", async () => {
    for (let n = 1; n <= 4; n++) {
      await harness.send({ name: "test/debounce", data: { group: "steady", n } });
      await harness.engine.clock.advance(8 * second);
    }
    // 32 s after the first event, each 8 s apart (under the period): the 30 s timeout started it.
    const runs = (await outputs("debounced")).filter((o) => (o as { group: string }).group === "steady");
    expect(runs).toEqual([{ group: "steady", last: 4, count: 1 }]);
  });

  test("batchEvents: a full batch starts at once, a partial one after its timeout", async () => {
    await harness.send([1, 2, 3, 4].map((n) => ({ name: "test/batch", data: { n } })));
    await harness.engine.drain();
    expect(await outputs("batched")).toEqual([[1, 2, 3]]);

    await harness.engine.clock.advance(19 * second);
    expect(await outputs("batched")).toEqual([[1, 2, 3]]);
    await harness.engine.clock.advance(2 * second);
    expect(await outputs("batched")).toEqual(expect.arrayContaining([[1, 2, 3], [4]]));
  });

  test("a pending start survives an engine restart", async () => {
    await harness.send({ name: "test/batch", data: { n: 7 } });
    await harness.engine.drain();
    await harness.engine.close();
    await harness.startEngine();
    await harness.engine.clock.advance(21 * second);
    expect(await outputs("batched")).toContainEqual([7]);
  });
});
