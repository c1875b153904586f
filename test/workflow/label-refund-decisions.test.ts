import request from "supertest";
import { createEasyPostClient } from "../../src/shipping/easypost-carrier";
import { defined } from "../support/defined";
import { adminToken, testShippingAddress, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * EasyPost's slow and awkward label refunds, end to end through the EasyPost stand-in: a refund
 * is `submitted` and decided days later (`rejected` when the carrier scanned the parcel, which
 * the service may not know: a tracker event lost or late), and a carrier billed on scan answers
 * `not_applicable`. Each through a cancel, a re-ship and a return; a rejection is told to ops
 * once, and the reconciliation reports it every day until the carrier refunds the label after all.
 */
describe("label refunds decided later, and not_applicable, through cancel, re-ship and returns", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { LABEL_REFUND_CHECK_EVERY: "1m" } });
  });
  afterAll(() => h.close());
  afterEach(() => h.easyPost.setBilledOnScan([]));

  const easyPost = () => h.easyPost;
  const api = (path: string, body: object = {}) =>
    request(h.appUrl).post(path).set("Authorization", `Bearer ${adminToken}`).send(body);
  const labelOf = (reference: string) =>
    easyPost()
      .shipments()
      .find((s) => s.reference === reference);
  /** The shop day the Stripe stand-in's clock is in (the reconciliation's default zone is UTC). */
  const today = () => new Date(h.sandbox.clock().now).toISOString().slice(0, 10);
  const dayAfter = (day: string) =>
    new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  const unrefundedLabelsOf = async (orderId: string, day: string) =>
    (await h.services.reconciliation.run({ date: day, by: "cli" })).mismatches.filter(
      (mismatch) => mismatch.orderId === orderId && mismatch.kind === "void_not_refunded",
    );
  const alertsAbout = (orderId: string) =>
    h.slack.bodies
      .filter((body) => JSON.stringify(body).includes(orderId))
      .map((body) => JSON.stringify(body));

  async function shippedOrder(sku: string, customerId: string) {
    await h.addProduct(sku, 5);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId,
      items: [{ sku, quantity: 1 }],
    });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    await h.placeOrder(orderId);
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("shipped");
    return { orderId, paymentIntentId };
  }

  it("a cancel whose label refund is submitted, then rejected (the scan's event never came): ops told once, the reconciliation reports it every day until the carrier refunds it", async () => {
    const { orderId } = await shippedOrder("DECIDE-1", "cus_decide_1");
    // The carrier scans the parcel; its tracker event is lost, so the service still sees it unscanned.
    await easyPost().advanceTracker(`order-${orderId}`, "in_transit", { deliver: false });
    expect((await h.order(orderId)).shipment?.trackerStatus).not.toBe("in_transit");

    await api(`/api/orders/${orderId}/cancel`, { reason: "changed my mind" }).expect(202);
    await h.settle(2);
    let order = await h.order(orderId);
    // EasyPost took the request: the cancel goes through (money back, stock back), the refund undecided.
    expect(order.status).toBe("cancelled");
    expect(order.payment?.status).toBe("refunded");
    expect(labelOf(`order-${orderId}`)?.refund_status).toBe("submitted");
    expect(order.shipment?.labelRefundStatus).toBe("submitted");
    expect(alertsAbout(orderId)).toHaveLength(0);

    // Days later the carrier decides: rejected, the parcel was scanned.
    await easyPost().settleLabelRefund(`order-${orderId}`);
    expect(labelOf(`order-${orderId}`)?.refund_status).toBe("rejected");
    // EasyPost's refund.successful event reaches the webhook, which takes it (and leaves the
    // decision to the run that follows the refund).
    expect(easyPost().deliveries.at(-1)).toMatchObject({ status: "rejected", responseStatus: 200 });
    await h.settle(4);
    order = await h.order(orderId);
    expect(order.shipment?.labelRefundStatus).toBe("rejected");
    expect(order.timeline.filter((e) => e.kind === "label-refund-rejected")).toHaveLength(1);
    expect(order.attentionReason).toMatch(/refused to refund the label of a cancelled order/);
    expect(alertsAbout(orderId)).toHaveLength(1);
    expect(alertsAbout(orderId)[0]).toMatch(/intercept the parcel/);
    // Told once: later looks, and the refund.successful event, add nothing.
    await h.settle(4);
    expect(alertsAbout(orderId)).toHaveLength(1);
    expect((await h.order(orderId)).timeline.filter((e) => e.kind === "label-refund-rejected")).toHaveLength(
      1,
    );

    // The reconciliation reports it today, and the next day, while the carrier says rejected.
    const day = today();
    const reported = await unrefundedLabelsOf(orderId, day);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({
      reference: labelOf(`order-${orderId}`)?.id,
      theirs: { refundStatus: "rejected" },
    });
    expect(await unrefundedLabelsOf(orderId, dayAfter(day))).toHaveLength(1);

    // Ops claim it: submitted again at EasyPost (its advice for a rejected refund), refunded this time.
    const label = defined(labelOf(`order-${orderId}`));
    const client = await createEasyPostClient({
      apiKey: "EZTK_ops",
      apiBase: easyPost().apiBase as string,
    });
    expect((await client.Shipment.refund(label.id)).refund_status).toBe("submitted");
    await easyPost().settleLabelRefund(label.id, "refunded");
    expect(await unrefundedLabelsOf(orderId, dayAfter(day))).toHaveLength(0);
  });

  it("a cancel on a carrier billed on scan: not_applicable, the cancel completes, nothing followed, ops not told, nothing to reconcile", async () => {
    easyPost().setBilledOnScan(["USPS"]);
    const { orderId } = await shippedOrder("DECIDE-2", "cus_decide_2");
    const label = defined(labelOf(`order-${orderId}`));
    expect(label.selected_rate?.carrier).toBe("USPS");
    expect(label.fees.find((fee) => fee.type === "PostageFee")?.charged).toBe(false);

    await api(`/api/orders/${orderId}/cancel`, { reason: "changed my mind" }).expect(202);
    await h.settle(4);
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.payment?.status).toBe("refunded");
    expect(labelOf(`order-${orderId}`)?.refund_status).toBe("not_applicable");
    expect(order.shipment?.labelRefundStatus).toBe("not_applicable");
    expect(order.timeline.find((e) => e.kind === "label-refund-requested")?.detail).toMatchObject({
      cause: "cancelled",
      status: "not_applicable",
    });
    expect(order.timeline.map((e) => e.kind)).not.toContain("cancel-needs-ops");
    expect(order.attentionReason).toBeNull();
    expect(alertsAbout(orderId)).toHaveLength(0);
    // Asked once: a not_applicable answer does not change with retries.
    expect(
      easyPost().requests.filter((r) => r.endpoint === "shipments.refund" && r.path.includes(label.id)),
    ).toHaveLength(1);
    expect(await unrefundedLabelsOf(orderId, today())).toHaveLength(0);

    // The parcel goes out after all (the label was handed back, not destroyed): the carrier scans
    // it and charges the postage, and the reconciliation reports it.
    await easyPost().advanceTracker(`order-${orderId}`, "in_transit", { deliver: false });
    expect(labelOf(`order-${orderId}`)?.fees.find((fee) => fee.type === "PostageFee")?.charged).toBe(true);
    const charged = await unrefundedLabelsOf(orderId, today());
    expect(charged).toHaveLength(1);
    expect(charged[0]).toMatchObject({
      reference: label.id,
      theirs: { refundStatus: "not_applicable", postageCharged: true },
    });
  });

  it("a re-ship: the replaced label's refund submitted, later rejected (ops told once, as a re-shipped parcel), and on a carrier billed on scan not_applicable", async () => {
    const { orderId } = await shippedOrder("DECIDE-3", "cus_decide_3");
    const old = defined((await h.order(orderId)).shipment);
    // Scanned at the carrier, the event lost: the parcel looks unscanned to the service.
    await easyPost().advanceTracker(old.trackingNumber, "in_transit", { deliver: false });
    const made = await api(`/api/orders/${orderId}/shipments/${old.id}/reship`).expect(201);
    expect(made.body.oldLabel).toBe("requested");
    expect(labelOf(`order-${orderId}`)?.refund_status).toBe("submitted");

    await easyPost().settleLabelRefund(`order-${orderId}`);
    await h.settle(4);
    const order = await h.order(orderId);
    const replaced = defined(order.shipments.find((s) => s.id === old.id));
    expect(replaced.labelRefundStatus).toBe("rejected");
    expect(order.timeline.filter((e) => e.kind === "label-refund-rejected")).toHaveLength(1);
    expect(alertsAbout(orderId)).toHaveLength(1);
    expect(alertsAbout(orderId)[0]).toMatch(/re-shipped parcel/);
    await h.settle(3);
    expect(alertsAbout(orderId)).toHaveLength(1);
    expect(await unrefundedLabelsOf(orderId, today())).toHaveLength(1);

    // The new label, on a carrier billed on scan, re-shipped again: not_applicable, nobody told.
    easyPost().setBilledOnScan(["USPS"]);
    const current = defined(order.shipments.find((s) => s.supersededAt === null));
    const again = await api(`/api/orders/${orderId}/shipments/${current.id}/reship`).expect(201);
    expect(again.body.oldLabel).toBe("requested");
    await h.settle(3);
    const after = await h.order(orderId);
    expect(after.shipments.find((s) => s.id === current.id)?.labelRefundStatus).toBe("not_applicable");
    expect(alertsAbout(orderId)).toHaveLength(1);
  });

  it("a return label handed back: submitted then rejected is reported by the reconciliation until refunded; on a carrier billed on scan, not_applicable and nothing to report", async () => {
    async function rejectedReturn(sku: string, customerId: string) {
      const { orderId } = await shippedOrder(sku, customerId);
      await easyPost().advanceTracker(`order-${orderId}`, "delivered");
      await h.settle(2);
      expect((await h.order(orderId)).status).toBe("delivered");
      const created = await api(`/api/orders/${orderId}/returns`, {
        lines: [{ sku, quantity: 1 }],
        reason: "other",
      }).expect(201);
      const { returnId } = created.body as { returnId: string };
      await h.settle(3);
      return { orderId, returnId };
    }

    const { orderId, returnId } = await rejectedReturn("DECIDE-4", "cus_decide_4");
    const reference = `return-${returnId}`;
    // The customer drops the parcel off (its event lost); ops reject the return meanwhile.
    await easyPost().advanceTracker(reference, "in_transit", { deliver: false });
    await api(`/api/returns/${returnId}/reject`, { note: "outside policy" }).expect(200);
    await h.settle(3);
    expect((await h.db.return.findUniqueOrThrow({ where: { id: returnId } })).labelRefundStatus).toBe(
      "submitted",
    );
    await easyPost().settleLabelRefund(reference);
    expect(labelOf(reference)?.refund_status).toBe("rejected");
    const reported = await unrefundedLabelsOf(orderId, today());
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({
      reference: labelOf(reference)?.id,
      theirs: { refundStatus: "rejected" },
    });
    expect(await unrefundedLabelsOf(orderId, dayAfter(today()))).toHaveLength(1);

    easyPost().setBilledOnScan(["USPS"]);
    const other = await rejectedReturn("DECIDE-5", "cus_decide_5");
    await api(`/api/returns/${other.returnId}/reject`, { note: "outside policy" }).expect(200);
    await h.settle(3);
    expect(labelOf(`return-${other.returnId}`)?.refund_status).toBe("not_applicable");
    expect((await h.db.return.findUniqueOrThrow({ where: { id: other.returnId } })).labelRefundStatus).toBe(
      "not_applicable",
    );
    expect(await unrefundedLabelsOf(other.orderId, today())).toHaveLength(0);
    // The customer sends it anyway: scanned, charged, reported.
    await easyPost().advanceTracker(`return-${other.returnId}`, "in_transit", { deliver: false });
    expect(await unrefundedLabelsOf(other.orderId, today())).toHaveLength(1);
  });
});
