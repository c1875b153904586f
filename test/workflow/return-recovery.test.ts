import { createReturnRecords } from "../../src/returns/return-records";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(180_000);

const minute = 60_000;

/**
 * A return recorded, then the process killed before its shop/return.requested left (or the
 * publish lost): no run, no label. recover-stalled-returns finds it within its period and starts
 * its run: one label, one alert, however often the sweep fires. A return whose run started is
 * left alone.
 */
describe("a return whose event was lost", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_WINDOW: "30d" } });
    await h.addProduct("RCV-1", 20, 2000);
  });
  afterAll(() => h.close());

  /** recover-stalled-returns fires every 2 hours. */
  const sweep = async () => {
    await h.engine.clock.advance(120 * minute);
    await h.settle(3);
  };
  const rescuedAlerts = (returnId: string) =>
    h.slack.bodies
      .map((body) => JSON.stringify(body))
      .filter((body) => body.includes("Return recovered") && body.includes(returnId));
  const labelsOf = (returnId: string) =>
    h.easyPost.shipments().filter((shipment) => shipment.reference === `return-${returnId}`);

  it("gets its label within the sweep's period, with no second label and one alert", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_rcv_crash",
      items: [{ sku: "RCV-1", quantity: 3 }],
    });
    await h.placeOrder(orderId);
    await h.settle(2);
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("delivered");

    // One return through the API: published, its run starts and buys its label.
    const created = await fetch(`${h.appUrl}/api/orders/${orderId}/returns`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ lines: [{ sku: "RCV-1", quantity: 1 }], reason: "other" }),
    });
    expect(created.status).toBe(201);
    const { returnId: published } = (await created.json()) as { returnId: string };
    await h.settle(3);
    expect(labelsOf(published)).toHaveLength(1);

    // The other as a crash leaves it: the row written by the use case's own insert, no event.
    const crashed = await createReturnRecords(h.db).create({
      orderId,
      lines: [{ sku: "RCV-1", quantity: 2 }],
      reason: "no_longer_needed",
      requestedBy: "customer",
      approved: true,
      windowMs: 30 * 24 * 60 * minute,
      now: new Date(),
    });
    await h.settle(2);
    expect(labelsOf(crashed.id)).toHaveLength(0);

    // Younger than the grace: the sweep leaves it (its publish may still be on the way).
    await sweep();
    expect(labelsOf(crashed.id)).toHaveLength(0);
    expect(rescuedAlerts(crashed.id)).toHaveLength(0);

    await h.db.$executeRawUnsafe(
      `UPDATE returns SET created_at = now() - interval '6 minutes', updated_at = now() - interval '6 minutes'
        WHERE id = ANY($1::uuid[])`,
      [crashed.id, published],
    );
    await sweep();
    const rescued = await h.db.return.findUniqueOrThrow({ where: { id: crashed.id } });
    expect(rescued.status).toBe("approved");
    expect(rescued.labelTrackingNumber).not.toBeNull();
    expect(rescued.runStartedAt).not.toBeNull();
    expect(labelsOf(crashed.id)).toHaveLength(1);
    expect(
      h.mailsTo(/return label/i).filter((m) => m.text?.includes(rescued.labelTrackingNumber ?? "-")),
    ).toHaveLength(1);
    expect(rescuedAlerts(crashed.id)).toHaveLength(1);

    // The sweep fires again, and again: nothing more.
    await sweep();
    await sweep();
    expect(labelsOf(crashed.id)).toHaveLength(1);
    expect(labelsOf(published)).toHaveLength(1);
    expect(rescuedAlerts(crashed.id)).toHaveLength(1);
    expect(rescuedAlerts(published)).toHaveLength(0);
    const kinds = (await h.order(orderId)).timeline.map((entry) => entry.kind);
    expect(kinds.filter((kind) => kind === "return-run-recovered")).toHaveLength(1);
  });
});
