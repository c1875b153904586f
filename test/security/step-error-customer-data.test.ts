import { Client } from "pg";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * With the encryption middleware on, step results and the customer's event fields reach Inngest as
 * ciphertext, but a step's error (name, message, stack, causes) is sent in clear: Inngest shows it
 * and puts it in inngest/function.failed. A carrier or mail server quoting the customer's address
 * or name in its error must not carry them there.
 */
describe("a step failing with the customer's data in its error", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("PRIVATE-1", 5);
  });
  afterAll(() => h.close());

  const address = {
    name: "Jane Quinterro-Doe",
    phone: "+1 415 555 0199",
    line1: "742 Evergreen Terrace",
    city: "Springfield",
    state: "OR",
    postalCode: "97403",
    country: "US",
  };
  const customerData = [
    "buyer@example.com",
    address.name,
    address.phone,
    address.line1,
    "Springfield",
    "97403",
  ];

  /** Everything the SDK sent the engine, as the engine keeps it: runs, steps, jobs and events. */
  async function whatInngestHolds(): Promise<string> {
    const client = new Client({ connectionString: h.database.url });
    await client.connect();
    try {
      const tables = await client.query<{ table_schema: string; table_name: string }>(
        `SELECT table_schema, table_name FROM information_schema.tables
          WHERE table_name IN ('runs', 'steps', 'jobs', 'events') AND table_schema NOT IN ('public', 'pg_catalog')`,
      );
      expect(tables.rows.map((row) => row.table_name).sort()).toEqual(["events", "jobs", "runs", "steps"]);
      const texts: string[] = [];
      for (const { table_schema, table_name } of tables.rows) {
        const rows = await client.query<{ text: string }>(
          `SELECT to_jsonb(t)::text AS text FROM "${table_schema}"."${table_name}" t`,
        );
        texts.push(...rows.rows.map((row) => row.text));
      }
      return texts.join("\n");
    } finally {
      await client.end();
    }
  }

  it("reaches Inngest with the customer's e-mail, name and address masked", async () => {
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "PRIVATE-1", quantity: 1 }] });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: address } });
    const shipments = h.services.workflow.shipments;
    const book = shipments.bookWithCarrier;
    // A carrier refusing the address and quoting it, with a cause that quotes the e-mail too.
    shipments.bookWithCarrier = () => {
      const cause = new Error(`notification address buyer@example.com refused`);
      throw new Error(
        `address rejected: ${address.name}, ${address.line1}, ${address.city} ${address.postalCode} (${address.phone})`,
        { cause },
      );
    };
    try {
      const eventId = await h.placeOrder(orderId);
      await h.settle();
      const [run] = await h.runsOfEvent(eventId);
      expect(run?.status).toBe("Failed");
    } finally {
      shipments.bookWithCarrier = book;
    }

    const held = await whatInngestHolds();
    // The failure did reach Inngest, with what ops need to act on it.
    expect(held).toContain("address rejected");
    expect(held).toContain(orderId);
    for (const value of customerData) expect(held).not.toContain(value);
    // The Slack alert is made from the error Inngest sent back.
    const alert = JSON.stringify(h.slack.accepted.filter((body) => JSON.stringify(body).includes(orderId)));
    expect(alert).toContain("address rejected");
    for (const value of customerData) expect(alert).not.toContain(value);
  });
});
