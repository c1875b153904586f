-- Every refund at Stripe is recorded once, whoever made it: its Stripe id is unique.
-- CreateIndex
CREATE UNIQUE INDEX "refunds_provider_id_key" ON "refunds"("provider_id");
