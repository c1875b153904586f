-- An ops console logout, kept where every process and every restart sees it: a cookie whose nonce
-- is here is refused until it would have expired anyway (src/pages/ops/session.ts). The nonce is
-- stored hashed; rows past expires_at are deleted by the next logout.
-- CreateTable
CREATE TABLE "ops_session_revocations" (
    "nonce_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ops_session_revocations_pkey" PRIMARY KEY ("nonce_hash")
);

-- CreateIndex
CREATE INDEX "ops_session_revocations_expires_at_idx" ON "ops_session_revocations"("expires_at");
