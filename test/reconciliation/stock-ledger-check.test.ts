import request from "supertest";
import { createStockLedger } from "../../src/inventory/stock-ledger";
import type { ReconciliationReport } from "../../src/reconciliation";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * The stock ledger's rule, stock on hand is the sum of its movements, is one of the daily
 * reconciliation's checks: a product whose stock was changed without its movement is a mismatch
 * with both values and a link to the product, and a ledger that adds up is none.
 */
describe("the daily reconciliation checks the stock ledger", () => {
  let h: WorkflowHarness;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const reconcile = async (): Promise<ReconciliationReport> => {
    const res = await request(h.appUrl)
      .post("/api/reconciliation/runs")
      .set("authorization", `Bearer ${adminToken}`)
      .send({ date: today })
      .expect(201);
    return res.body as ReconciliationReport;
  };
  const ledgerRows = (report: ReconciliationReport) =>
    report.mismatches.filter((mismatch) => mismatch.kind === "stock_ledger_differs");

  it("reports a product whose stock is not the sum of its movements, and only that one", async () => {
    const ledger = createStockLedger(h.db);
    for (const sku of ["LEDGER-OK", "LEDGER-HAND"]) {
      await h.db.product.create({
        data: { sku, name: sku, unitPrice: 1000, currency: "usd", stockOnHand: 0 },
      });
      await ledger.record({ sku, delta: 24, reason: "received", actor: "test" });
    }

    const clean = await reconcile();
    expect(ledgerRows(clean)).toEqual([]);
    expect(clean.counts.stock_ledger_differs).toBeUndefined();

    // Stock changed by SQL by hand: no movement row says so.
    await h.db.$executeRaw`UPDATE products SET stock_on_hand = stock_on_hand + 5 WHERE sku = 'LEDGER-HAND'`;

    const report = await reconcile();
    expect(report.id).toBe(clean.id);
    expect(ledgerRows(report)).toEqual([
      expect.objectContaining({
        kind: "stock_ledger_differs",
        orderId: null,
        reference: "LEDGER-HAND",
        ours: { stockOnHand: 29 },
        theirs: { ledgerSum: 24 },
        link: "http://shop.test/ops/products/LEDGER-HAND",
      }),
    ]);
    expect(report.counts.stock_ledger_differs).toBe(1);

    // Once the change by hand is undone, the next run of the day no longer reports it.
    await h.db.$executeRaw`UPDATE products SET stock_on_hand = stock_on_hand - 5 WHERE sku = 'LEDGER-HAND'`;
    expect(ledgerRows(await reconcile())).toEqual([]);
  });
});
