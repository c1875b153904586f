import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import express from "express";
import request from "supertest";
import { createOutboxTransport } from "../../src/notifications";
import { devOutbox } from "../../src/pages/outbox/routes";

describe("dev inbox (/dev/outbox)", () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), "dev-outbox-"));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it("lists every write, a re-send under the same Message-ID included, and shows each rendered in a sandbox", async () => {
    const transport = createOutboxTransport(directory);
    const email = {
      messageId: "<shipped-1@shop.example>",
      from: "Shop <orders@shop.example>",
      to: "buyer@example.com",
      text: "Your order is on its way",
      html: "<p>Your order is <b>on its way</b></p>",
    };
    await transport.send({ ...email, subject: "On its way" });
    await transport.send({ ...email, subject: "On its way (again)" });
    transport.close();

    const app = express().use(devOutbox({ directory }));
    const list = await request(app).get("/dev/outbox").expect(200);
    expect(list.text).toContain("2 message(s)");
    expect(list.text).toContain("On its way (again)");
    expect(list.text).toContain("shipped-1@shop.example.2.eml");

    const page = await request(app).get("/dev/outbox/shipped-1%40shop.example.eml").expect(200);
    expect(page.text).toContain(
      '<iframe sandbox="allow-popups allow-popups-to-escape-sandbox" title="HTML part" src="/dev/outbox/shipped-1%40shop.example.eml/html"',
    );
    expect(page.text).toContain("Your order is on its way");
    const html = await request(app).get("/dev/outbox/shipped-1%40shop.example.eml/html").expect(200);
    // Sandboxed (no scripts, no top navigation); its links open a new tab, not inside the preview.
    expect(html.headers["content-security-policy"]).toMatch(
      /^sandbox allow-popups allow-popups-to-escape-sandbox;/,
    );
    expect(html.text).toContain("<b>on its way</b>");
    expect(html.text).toMatch(/^<base target="_blank" \/>|<head[^>]*><base target="_blank" \/>/);
    await request(app).get("/dev/outbox/shipped-1%40shop.example.eml/raw").expect(200);

    await request(app).get("/dev/outbox/..%2Fsecrets.eml").expect(404);
    await request(app).get("/dev/outbox/nothing.eml").expect(404);
  });
});
