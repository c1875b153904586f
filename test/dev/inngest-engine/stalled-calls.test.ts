import { Client } from "pg";
import { Harness, type RunView } from "./fixtures/harness";

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls for a state; the deadline only bounds a failing test, it measures nothing. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await pause(20);
  }
}

/**
 * A statement of the engine that fails for no reason of the run's (a dropped connection, a
 * server restart, a deadlock) must not leave a call claimed with nothing executing it: Inngest
 * retries every queue item it does not finish, so no run stays "in flight" forever. The fault is
 * a real one, raised by PostgreSQL itself (a trigger on the engine's own table), once.
 */
describe("local Inngest engine: a statement failing mid-run", () => {
  let harness: Harness;
  const executed: Record<string, number> = {};
  const bump = (key: string): void => {
    executed[key] = (executed[key] ?? 0) + 1;
  };

  beforeAll(async () => {
    harness = await Harness.start({
      // Classic calls: one step per call, so the failing statement is the second step's.
      engine: { checkpointing: false },
      functions: (inngest) => [
        inngest.createFunction(
          { id: "three-steps", triggers: [{ event: "test/three-steps" }] },
          async ({ step }) => {
            await step.run("one", () => bump("one"));
            await step.run("two", () => bump("two"));
            await step.run("three", () => bump("three"));
            return "done";
          },
        ),
        inngest.createFunction(
          { id: "started-by-event", triggers: [{ event: "test/start-once" }] },
          async ({ step }) => {
            await step.run("only", () => bump("started"));
            return "started";
          },
        ),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  async function withDatabase(work: (client: Client) => Promise<void>): Promise<void> {
    const client = new Client({ connectionString: harness.db.url });
    await client.connect();
    try {
      await work(client);
    } finally {
      await client.end();
    }
  }

  it("hands the call it was executing back to the queue, so the run still completes", async () => {
    // Memoising step "two" fails once: the executor is then on the run's second call (the
    // discovery job the first call's statement created claimed), not on the job it started with.
    await withDatabase(async (client) => {
      await client.query(`
        CREATE SEQUENCE test_fault_once;
        CREATE FUNCTION test_fail_step_two_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.name = 'two' AND nextval('test_fault_once') = 1 THEN
            RAISE EXCEPTION 'injected fault: memoising step two';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_fail_step_two_once BEFORE INSERT ON inngest_local.steps
          FOR EACH ROW EXECUTE FUNCTION test_fail_step_two_once();`);
    });

    const [eventId] = await harness.send({ name: "test/three-steps" });
    const [started] = await until(
      () => harness.runsOf(eventId as string),
      (runs) => runs.length === 1,
      "the run",
    );
    const runId = (started as RunView).run_id;
    await until(
      () => Promise.resolve(executed.two ?? 0),
      (count) => count === 1,
      "step two's first attempt",
    );
    // The failed job is retried after a pause on the engine clock (frozen here): move the clock
    // past it until the run ends (not drain(), which would wait forever for an orphaned call).
    const run = await until(
      async () => {
        harness.clock.shift(10_000);
        return harness.run(runId);
      },
      (view) => view.status !== "Running",
      "the run to end",
    );
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("done");
    expect(run.pending).toEqual([]);
    // At least once: "two" ran again because its result was never memoised.
    expect(executed).toEqual({ one: 1, two: 2, three: 1 });
  });

  it("starts the runs of an event whose first delivery failed after storing it", async () => {
    // Creating the run fails once: the event API answers 500 with the event already stored.
    await withDatabase(async (client) => {
      await client.query(`
        CREATE SEQUENCE test_run_fault_once;
        CREATE FUNCTION test_fail_run_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.function_id LIKE '%started-by-event' AND nextval('test_run_fault_once') = 1 THEN
            RAISE EXCEPTION 'injected fault: creating the run';
          END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER test_fail_run_once BEFORE INSERT ON inngest_local.runs
          FOR EACH ROW EXECUTE FUNCTION test_fail_run_once();`);
    });
    // As the SDK sends: a failed send is retried with the same id seed, so the same event ids.
    const send = () =>
      fetch(`${harness.engineUrl}/e/test-key`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-inngest-event-id-seed": "1796040000000,c2VlZC1vbmNl",
        },
        body: JSON.stringify({ name: "test/start-once", data: {} }),
      });
    const first = await send();
    expect(first.status).toBe(500);
    const retry = await send();
    expect(retry.status).toBe(200);
    const { ids } = (await retry.json()) as { ids: string[] };

    const runs = await until(
      () => harness.runsOf(ids[0] as string),
      (found) => found.length > 0 && found.every((run) => run.status !== "Running"),
      "the event's run to end",
    );
    expect(runs.map((run) => [run.status, run.output])).toEqual([["Completed", "started"]]);
    expect(executed.started).toBe(1);
  });
});
