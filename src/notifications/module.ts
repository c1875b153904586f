import type { Alerter } from "../alerts";
import type { Config } from "../config";
import type { Database } from "../db/client";
import { emailQueuedEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { OrderStatus } from "../generated/prisma/enums";
import type { Logger } from "../logger";
import { brandFromConfig } from "../shared/brand";
import { durationMs } from "../shared/duration";
import { brandedEmailSender } from "./branded-email-sender";
import { createEmailTransport } from "./create-email-transport";
import { createEmailRenderer } from "./email-renderer";
import { createEmailSender, defaultRetryPolicy, type EmailSender } from "./email-sender";
import { createFreshLinks } from "./fresh-link";
import { createOrderEmails } from "./order-emails";

/**
 * The e-mails, composed in their own folder: the transport, the outbox-backed delivery (an e-mail
 * left in the outbox is retried by send-held-back-emails, batched), the branded sender, the
 * renderer the ops console previews with, and the order e-mails the workflow sends.
 */
export function createNotificationsModule(shared: {
  config: Config;
  db: Database;
  logger: Logger;
  alerts: Pick<Alerter, "notify">;
  publisher: EventPublisher;
  /** Signed links to the customer's pages (src/pages/links.ts). */
  links: {
    order(orderId: string): string;
    review(orderId: string): string;
    track(trackingNumber: string): string;
    address(orderId: string): string;
  };
  /** Wraps the sender the rest of the service uses (the metrics' observedEmailSender). */
  observe: (sender: EmailSender) => EmailSender;
  /** Hears of every status change an e-mail's statement makes (the transitions' metrics). */
  onTransition: (to: OrderStatus) => void;
}) {
  const { config, db, logger, alerts, publisher, links } = shared;
  const transport = createEmailTransport(config, logger);
  const delivery = createEmailSender({
    db,
    transport,
    from: config.EMAIL_FROM,
    logger,
    retry: { ...defaultRetryPolicy, giveUpAfterMs: durationMs(config.EMAIL_RETRY_FOR) },
    onGiveUp: (email) =>
      alerts.notify({
        title: "E-mail given up after retrying",
        fields: { ...email, orderId: email.orderId ?? undefined, action: "Reach the customer another way" },
      }),
    // An e-mail left in the outbox is retried by send-held-back-emails, batched.
    onQueued: (email) => publisher.publish(emailQueuedEvent(email)),
  });
  const brand = brandFromConfig(config);
  const sender = shared.observe(brandedEmailSender(delivery, brand));
  const renderer = createEmailRenderer({ db, links, brand });
  return {
    transport,
    /** The outbox the workflow drains (drain-email-outbox). */
    delivery,
    brand,
    sender,
    renderer,
    freshLinks: createFreshLinks({ db, sender, renderer }),
    messages: createOrderEmails({ db, sender, links, onTransition: shared.onTransition }),
  };
}

export type NotificationsModule = ReturnType<typeof createNotificationsModule>;
