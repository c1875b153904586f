import { readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { Router } from "express";
import { Layout, formatTime, sendPage } from "../layout";
import { framedBySelf } from "../../http/security-headers";
import { emailFrameSandbox, linksOpenOutside } from "../email-frame";

/**
 * `/dev/outbox`: the .eml files the outbox transport wrote, like Mailpit's inbox. Mounted only
 * without SMTP_URL and outside production (src/pages/index.ts). mailparser is a development
 * dependency, loaded on first use, so the production image never needs it.
 */
interface Parsed {
  subject: string;
  to: string;
  date?: Date;
  messageId: string;
  html: string;
  text: string;
}

async function parse(file: string): Promise<Parsed> {
  const { simpleParser } = await import("mailparser");
  const mail = await simpleParser(await readFile(file));
  const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(", ") : (mail.to?.text ?? "");
  return {
    subject: mail.subject ?? "(no subject)",
    to,
    ...(mail.date ? { date: mail.date } : {}),
    messageId: mail.messageId ?? "",
    html: typeof mail.html === "string" ? mail.html : "",
    text: mail.text ?? "",
  };
}

const validName = /^[A-Za-z0-9._@-]+\.eml$/;

export function devOutbox(options: { directory: string }): Router {
  const router = Router();
  const fileOf = (name: string) => (validName.test(name) ? path.join(options.directory, name) : undefined);

  router.get("/dev/outbox", async (_req, res) => {
    const names = await readdir(options.directory).catch(() => [] as string[]);
    const files = await Promise.all(
      names
        .filter((name) => validName.test(name))
        .map(async (name) => {
          const file = path.join(options.directory, name);
          return { name, written: (await stat(file)).mtime, mail: await parse(file) };
        }),
    );
    files.sort((a, b) => b.written.getTime() - a.written.getTime() || b.name.localeCompare(a.name));
    sendPage(
      res,
      <Layout title="Dev inbox" brand="Dev inbox">
        <h1>E-mails written to the outbox</h1>
        <p class="muted small">
          {options.directory} · {files.length} message(s) · SMTP_URL is not set, so nothing left this machine.
        </p>
        <div class="card">
          <table>
            <thead>
              <tr>
                <th>Subject</th>
                <th class="hide">To</th>
                <th>Written</th>
              </tr>
            </thead>
            <tbody>
              {files.map((file) => (
                <tr key={file.name}>
                  <td>
                    <a href={`/dev/outbox/${encodeURIComponent(file.name)}`}>{file.mail.subject}</a>
                    <div class="muted small">{file.name}</div>
                  </td>
                  <td class="hide">{file.mail.to}</td>
                  <td class="small">{formatTime(file.written)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {files.length === 0 ? <p class="muted">Nothing yet.</p> : null}
        </div>
      </Layout>,
    );
  });

  router.get("/dev/outbox/:name", async (req, res) => {
    const file = fileOf(req.params.name);
    const mail = file ? await parse(file).catch(() => undefined) : undefined;
    if (!mail) {
      res.status(404).type("text").send("No such message in the outbox");
      return;
    }
    sendPage(
      res,
      <Layout title={mail.subject} brand="Dev inbox">
        <p>
          <a href="/dev/outbox">← Inbox</a>
        </p>
        <h1>{mail.subject}</h1>
        <p class="small">
          To {mail.to} · {formatTime(mail.date)} · Message-ID <code>{mail.messageId}</code> ·{" "}
          <a href={`/dev/outbox/${encodeURIComponent(req.params.name)}/raw`}>raw .eml</a>
        </p>
        <iframe
          sandbox={emailFrameSandbox}
          title="HTML part"
          src={`/dev/outbox/${encodeURIComponent(req.params.name)}/html`}
        />
        <h2 class="spaced">Text part</h2>
        <pre class="card wrap">{mail.text}</pre>
      </Layout>,
    );
  });

  router.get("/dev/outbox/:name/html", async (req, res) => {
    const file = fileOf(req.params.name);
    const mail = file ? await parse(file).catch(() => undefined) : undefined;
    if (!mail) {
      res.status(404).type("text").send("No such message in the outbox");
      return;
    }
    // Shown in a sandboxed iframe of the message's page; sandboxed when opened directly too.
    res.set(framedBySelf);
    res.type("html").send(linksOpenOutside(mail.html));
  });

  router.get("/dev/outbox/:name/raw", async (req, res) => {
    const file = fileOf(req.params.name);
    const raw = file ? await readFile(file).catch(() => undefined) : undefined;
    if (!raw) {
      res.status(404).type("text").send("No such message in the outbox");
      return;
    }
    res.type("message/rfc822").send(raw);
  });

  return router;
}
