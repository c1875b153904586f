import { Client } from "pg";
import { runFullOrder } from "../ops/full-order";
import { WorkflowHarness } from "../support/workflow-harness";
import { testEncryptionKey } from "../support/encryption";

jest.setTimeout(60_000);

/**
 * Customer data does not leave for Inngest in clear. The local engine keeps everything Inngest would store
 * (events, run state, step results, outputs) in its own schema: after whole orders, nothing there may contain
 * the customer's e-mail address or payment id, while the ids its expressions read (orderId, customerId) stay
 * readable.
 */
describe("customer data does not leave for Inngest in clear", () => {
  /** Every row of every table of the engine's schema, as one text. */
  async function engineState(h: WorkflowHarness): Promise<string> {
    const client = new Client({ connectionString: h.database.url });
    await client.connect();
    try {
      const tables = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'inngest_local'",
      );
      const dumps: string[] = [];
      for (const { table_name: table } of tables.rows) {
        const rows = await client.query(`SELECT * FROM inngest_local."${table}"`);
        dumps.push(JSON.stringify(rows.rows));
      }
      expect(tables.rows.length).toBeGreaterThan(0);
      return dumps.join("\n");
    } finally {
      await client.end();
    }
  }

  it("the local engine holds only ciphertext of the customer's e-mail and payment id", async () => {
    const h = await WorkflowHarness.start({ env: { INNGEST_ENCRYPTION_KEY: testEncryptionKey } });
    try {
      await h.addProduct("ENC-1", 5);
      const { orderId } = await runFullOrder(h, "ENC-1");
      const order = await h.order(orderId);
      expect(order.status).toBe("completed");
      const paymentIntentId = order.payment?.providerId;
      expect(paymentIntentId).toMatch(/^pi_/);

      const state = await engineState(h);
      expect(state).toContain(orderId);
      expect(state).toContain(order.customerId);
      expect(state).toContain("__ENCRYPTED__");
      expect(state).not.toContain(order.email);
      expect(state).not.toContain(paymentIntentId);
    } finally {
      await h.close();
    }
  });

  it("a run that started under the previous key finishes after a rotation", async () => {
    const previousKey = "previous-inngest-encryption-key-0123456789";
    const h = await WorkflowHarness.start({ env: { INNGEST_ENCRYPTION_KEY: previousKey } });
    try {
      await h.addProduct("ENC-2", 5);
      const { orderId } = await h.createPaidOrder({ items: [{ sku: "ENC-2", quantity: 1 }] });
      await h.placeOrder(orderId);
      await h.settle(2);
      expect((await h.order(orderId)).status).toBe("shipped");

      // Redeployed with a new key; the old one only decrypts. The waiting run resumes and completes.
      await h.restartService({
        INNGEST_ENCRYPTION_KEY: testEncryptionKey,
        INNGEST_ENCRYPTION_KEY_PREVIOUS: previousKey,
      });
      await h.engine.clock.advance(15 * 24 * 3600_000);
      await h.engine.drain();
      expect((await h.order(orderId)).status).toBe("completed");
    } finally {
      await h.close();
    }
  });
});
