/** One fully addressed message, ready for a transport. */
export interface OutgoingEmail {
  /** The Message-ID header, angle brackets included; the same on every attempt of one e-mail. */
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface TransportReceipt {
  /** What the provider calls the message (the SMTP server's queue reply, or the outbox file). */
  providerMessageId: string;
}

/** Where e-mail leaves the service: SMTP in production, .eml files in an outbox elsewhere. */
export interface EmailTransport {
  readonly kind: "smtp" | "outbox";
  send(email: OutgoingEmail): Promise<TransportReceipt>;
  close(): void;
}
