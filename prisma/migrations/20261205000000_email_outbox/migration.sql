-- E-mail outbox: the rendered message is kept with its key so a cron can send it after an SMTP
-- outage; a lease (not a row lock held across the SMTP conversation) keeps two senders apart.
ALTER TABLE "email_messages" ADD COLUMN "subject" TEXT,
ADD COLUMN "body_text" TEXT,
ADD COLUMN "body_html" TEXT,
ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "lease_until" TIMESTAMPTZ(3),
ADD COLUMN "next_attempt_at" TIMESTAMPTZ(3),
ADD COLUMN "gave_up_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "email_messages_status_next_attempt_at_idx" ON "email_messages"("status", "next_attempt_at");
