-- Where each recovery sweep got to (e.g. the Stripe Events API sweep), so a restart resumes there.
CREATE TABLE "recovery_checkpoints" (
    "name" TEXT NOT NULL,
    "cursor" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "recovery_checkpoints_pkey" PRIMARY KEY ("name")
);
