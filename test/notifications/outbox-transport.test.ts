import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { simpleParser } from "mailparser";
import { parseConfig } from "../../src/config";
import { createLogger } from "../../src/logger";
import { createEmailTransport } from "../../src/notifications/create-email-transport";
import { createEmailSender } from "../../src/notifications/email-sender";
import { createOutboxTransport } from "../../src/notifications/outbox-transport";
import { orderCancelled } from "../../src/notifications/templates";
import { createTestDatabase, type TestDatabase } from "../support/database";

const logger = createLogger({ level: "silent" });

describe("outbox transport", () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), "outbox-test-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  });

  it("writes one parseable .eml per e-mail, however often it is sent", async () => {
    const outbox = path.join(dataDir, "outbox");
    const transport = createOutboxTransport(outbox);
    const sender = createEmailSender({
      db: database.db,
      transport,
      from: "Shop <orders@shop.example>",
      logger,
    });
    const order = await database.db.order.create({
      data: { customerId: "cus_outbox", email: "buyer@example.com", currency: "eur", total: 1250 },
    });
    const content = orderCancelled({
      order: {
        orderId: order.id,
        currency: "eur",
        total: 1250,
        lines: [{ name: "Tea", quantity: 1, unitPrice: 1250 }],
      },
      settlement: { kind: "refunded", amount: 1250 },
    });
    const request = {
      idempotencyKey: `cancelled-${order.id}`,
      orderId: order.id,
      template: "orderCancelled" as const,
      to: "buyer@example.com",
      content,
    };

    await sender.send(request);
    await sender.send(request);

    const files = await readdir(outbox);
    expect(files).toEqual([`cancelled-${order.id}@shop.example.eml`]);
    const raw = await readFile(path.join(outbox, files[0] ?? ""));
    expect(raw.toString("latin1")).toContain("\r\n");
    const mail = await simpleParser(raw);
    expect(mail.messageId).toBe(`<cancelled-${order.id}@shop.example>`);
    expect(mail.subject).toBe(content.subject);
    expect(mail.to).toMatchObject({ value: [{ address: "buyer@example.com" }] });
    expect(mail.text).toContain("€12.50");
    expect(mail.html).toContain("€12.50");

    const row = await database.db.emailMessage.findUniqueOrThrow({
      where: { idempotencyKey: request.idempotencyKey },
    });
    expect(row).toMatchObject({ status: "sent", providerMessageId: path.join(outbox, files[0] ?? "") });
    transport.close();
  });

  it("keeps every write: a re-send under the same Message-ID does not overwrite the earlier file", async () => {
    const outbox = path.join(dataDir, "outbox-resend");
    const transport = createOutboxTransport(outbox);
    const email = {
      messageId: "<same-id@shop.example>",
      from: "Shop <orders@shop.example>",
      to: "buyer@example.com",
      text: "hello",
      html: "<p>hello</p>",
    };
    const first = await transport.send({ ...email, subject: "first" });
    const second = await transport.send({ ...email, subject: "second" });
    expect(second.providerMessageId).not.toBe(first.providerMessageId);
    const files = (await readdir(outbox)).sort();
    expect(files).toEqual(["same-id@shop.example.2.eml", "same-id@shop.example.eml"]);
    expect((await simpleParser(await readFile(path.join(outbox, "same-id@shop.example.eml")))).subject).toBe(
      "first",
    );
    expect(
      (await simpleParser(await readFile(path.join(outbox, "same-id@shop.example.2.eml")))).subject,
    ).toBe("second");
    transport.close();
  });

  it("is chosen without SMTP_URL outside production, and SMTP with it", () => {
    const outbox = createEmailTransport(parseConfig({ DATA_DIR: dataDir }), logger);
    const smtp = createEmailTransport(parseConfig({ SMTP_URL: "smtp://127.0.0.1:2525" }), logger);

    expect(outbox.kind).toBe("outbox");
    expect(smtp.kind).toBe("smtp");
    outbox.close();
    smtp.close();
  });

  it("In development, database files are world-writable (0666) and mail files 0644: mail is written 0600 in a 0700 folder", async () => {
    const previous = process.umask(0o022);
    try {
      const outbox = path.join(dataDir, "private-outbox");
      const transport = createOutboxTransport(outbox);
      const receipt = await transport.send({
        messageId: "<modes@shop.example>",
        from: "Shop <orders@shop.example>",
        to: "buyer@example.com",
        subject: "Modes",
        text: "private",
        html: "<p>private</p>",
      });
      transport.close();
      expect((await stat(outbox)).mode & 0o777).toBe(0o700);
      expect((await stat(receipt.providerMessageId)).mode & 0o777).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });
});
