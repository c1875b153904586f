import { defined } from "../support/defined";
import { eventually, gate } from "../support/eventually";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * A return's labels fenced after the carrier call (issue 37, decision 0170): when ops end the
 * return while its return or exchange label is being bought (the EasyPost stand-in holds the
 * purchase's answer), the step that bought it hands it back, with a timeline entry, and no e-mail
 * tells the customer about it. The step is called as process-return calls it, on a return with
 * no run of its own: real Inngest does not wait for a step in flight before a cancelled run's
 * cleanup looks for the label (the local engine does), so only the step itself can fence it.
 */
describe("return and exchange labels bought while the return ends", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_WINDOW: "30d" } });
    await h.addProduct("RLR-1", 20, 2500);
    await h.addProduct("RLR-1S", 20, 2000);
  });
  afterAll(() => h.close());

  const api = (path: string, body?: unknown) =>
    fetch(`${h.appUrl}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const work = () => defined(h.services.workflow.returns).work;
  const label = (reference: string) => h.easyPost.shipments().find((s) => s.reference === reference);

  /** A delivered order and an approved return of one unit (an exchange for RLR-1S when asked). */
  async function approvedReturn(customerId: string, exchange: boolean) {
    const { orderId } = await h.createPaidOrder({ customerId, items: [{ sku: "RLR-1", quantity: 2 }] });
    await h.placeOrder(orderId);
    await h.settle(2);
    await h.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("delivered");
    const row = await h.db.return.create({
      data: {
        orderId,
        status: "approved",
        reason: "wrong_item",
        requestedBy: "admin-api",
        lines: {
          create: [
            {
              sku: "RLR-1",
              quantity: 1,
              unitPrice: 2500,
              ...(exchange ? { exchangeSku: "RLR-1S", exchangeUnitPrice: 2000 } : {}),
            },
          ],
        },
      },
    });
    return { orderId, returnId: row.id };
  }

  it("closed while its return label is bought: the step hands the label back, no label e-mail", async () => {
    const { orderId, returnId } = await approvedReturn("cus_rlr_return", false);
    const answer = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    const bought = work().buyLabel(returnId, "run-rlr-return");
    await eventually("return label bought", () => label(`return-${returnId}`)?.postage_label != null);

    expect((await api(`/api/returns/${returnId}/close`, { note: "kept it" })).status).toBe(200);
    answer.open();
    expect(await bought).toMatchObject({ created: true, handedBack: "submitted" });
    expect(await work().emailLabel(returnId, "run-rlr-return")).toEqual({ status: "skipped" });

    expect(label(`return-${returnId}`)?.refund_status).toBe("submitted");
    const row = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect([row.status, row.labelRefundStatus]).toEqual(["closed", "submitted"]);
    const order = await h.order(orderId);
    const entries = order.timeline.filter((e) => e.kind === "return-label-refund-requested");
    expect(entries.map((e) => e.detail)).toEqual([
      expect.objectContaining({ returnId, status: "submitted", label: "return" }),
    ]);
    expect(order.emails.map((email) => email.template)).not.toContain("returnLabel");
  });

  it("closed while its exchange label is bought: the step hands the label back, no exchange e-mail", async () => {
    const { orderId, returnId } = await approvedReturn("cus_rlr_exchange", true);
    const answer = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    const shipped = work().shipExchange(returnId, "run-rlr-exchange");
    await eventually("exchange label bought", () => label(`exchange-${returnId}`)?.postage_label != null);

    expect((await api(`/api/returns/${returnId}/close`, { note: "refunded instead" })).status).toBe(200);
    answer.open();
    expect(await shipped).toMatchObject({ created: true, handedBack: "submitted" });
    expect(await work().emailExchange(returnId, "run-rlr-exchange")).toEqual({ status: "skipped" });

    expect(label(`exchange-${returnId}`)?.refund_status).toBe("submitted");
    const order = await h.order(orderId);
    const entries = order.timeline.filter((e) => e.kind === "return-label-refund-requested");
    expect(entries.map((e) => e.detail)).toEqual([
      expect.objectContaining({ returnId, status: "submitted", label: "exchange" }),
    ]);
    expect(order.emails.map((email) => email.template)).not.toContain("exchangeShipped");
  });
});
