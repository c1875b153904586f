import { Client } from "pg";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

const minute = 60_000;
const day = 24 * 60 * minute;

/**
 * What a production order costs at Inngest (issue 43): Inngest bills one execution per function
 * run and one per step (a run with five steps is six), so an order's cost is its runs plus their
 * memoised steps (step.run, sleeps, waits), counted as `npm run bench:orders` counts them from the
 * engine's tables. Production's configuration: FULFILMENT_HOLD on, the parcel delivered by the
 * carrier's signed webhook, the review asked for after it. Goal: at most 9.
 */
describe("executions of a production order", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { FULFILMENT_HOLD: "30m" } });
    await h.addProduct("EXEC-1", 5);
  });
  afterAll(() => h.close());

  async function executionsOf(orderId: string) {
    const client = new Client({ connectionString: h.database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ runs: number; steps: number }>(
        `SELECT count(*)::int AS runs,
                coalesce(sum((SELECT count(*) FROM inngest_local.steps s WHERE s.run_id = r.id)), 0)::int AS steps
         FROM inngest_local.runs r
         WHERE r.event->>'name' <> 'inngest/scheduled.timer' AND r.event->'data'->>'orderId' = $1`,
        [orderId],
      );
      const names = await client.query<{ name: string | null }>(
        `SELECT s.name FROM inngest_local.steps s JOIN inngest_local.runs r ON r.id = s.run_id
         WHERE r.event->'data'->>'orderId' = $1 ORDER BY s.seq`,
        [orderId],
      );
      const [counts = { runs: 0, steps: 0 }] = rows;
      return { ...counts, total: counts.runs + counts.steps, steps: names.rows.map((row) => row.name) };
    } finally {
      await client.end();
    }
  }

  it("is held, charged, shipped, delivered and reviewed in at most 9 executions", async () => {
    const { orderId } = await h.checkoutPaidOrder({
      customerId: "cus_exec_1",
      items: [{ sku: "EXEC-1", quantity: 1 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.engine.drain();
    expect((await h.order(orderId)).holdReason).toBe("fulfilment_window");

    await h.engine.clock.advance(31 * minute);
    await h.settle(2);
    const shipped = await h.order(orderId);
    expect(shipped.status).toBe("shipped");
    expect(shipped.holdReason).toBeNull();

    const { delivery } = await h.easyPost.advanceTracker(shipped.shipment?.trackingNumber ?? "", "delivered");
    expect(delivery?.responseStatus).toBe(200);
    await h.engine.drain();
    expect((await h.order(orderId)).status).toBe("delivered");

    await h.engine.clock.advance(3 * day + minute);
    await h.engine.drain();
    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Completed");
    const order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(order.timeline.map((entry) => entry.kind)).toEqual(
      expect.arrayContaining([
        "claimed",
        "stock-reserved",
        "hold-placed",
        "hold-released",
        "shipment-booked",
        "delivered",
        "review-requested",
      ]),
    );
    expect(h.mailsTo(/How was your order/)).toHaveLength(1);

    const executions = await executionsOf(orderId);
    expect(executions.runs).toBe(1);
    // Named on failure: which steps the order paid for.
    expect({ total: executions.total, steps: executions.steps }).toEqual({
      total: executions.total <= 9 ? executions.total : "at most 9",
      steps: executions.steps,
    });
  });
});
