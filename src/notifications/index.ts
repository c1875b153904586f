export {
  createEmailSender,
  type EmailOutbox,
  type EmailSender,
  type SendEmailRequest,
  type SendEmailResult,
} from "./email-sender";
export type { EmailTransport, OutgoingEmail, TransportReceipt } from "./email-transport";
export { createEmailTransport } from "./create-email-transport";
export { createOutboxTransport } from "./outbox-transport";
export { createSmtpTransport } from "./smtp-transport";
export { messageIdFor } from "./message-id";
export * from "./templates";
