import path from "node:path";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { EmailTransport } from "./email-transport";
import { createOutboxTransport } from "./outbox-transport";
import { createSmtpTransport } from "./smtp-transport";

/** SMTP when SMTP_URL is set; otherwise, outside production only, the .eml outbox under DATA_DIR. */
export function createEmailTransport(config: Config, logger: Logger): EmailTransport {
  if (config.SMTP_URL !== undefined) return createSmtpTransport(config.SMTP_URL);
  if (config.isProduction) throw new Error("SMTP_URL is required when NODE_ENV=production");
  const directory = path.resolve(config.DATA_DIR, "outbox");
  logger.info({ directory }, "SMTP_URL is not set: e-mails are written to the outbox as .eml files");
  return createOutboxTransport(directory);
}
