-- The outbox drain selects `status <> 'sent' AND gave_up_at IS NULL AND subject IS NOT NULL`, which
-- the (status, next_attempt_at) index cannot serve: without this partial index each drain (once a
-- minute) read the whole e-mail history. The index holds only the messages still to send.
-- CreateIndex
CREATE INDEX "email_messages_outbox_due_idx" ON "email_messages"("next_attempt_at") WHERE status <> 'sent' AND gave_up_at IS NULL AND subject IS NOT NULL;
