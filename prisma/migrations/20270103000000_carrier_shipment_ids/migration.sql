-- The EasyPost shipment each label reference is bought on, recorded before the buy (decision
-- 0185): EasyPost does not keep `reference` unique, so a retry whose buy answer was lost finds its
-- shipment by this id, not by a reference another attempt may share. First writer wins.
-- CreateTable
CREATE TABLE "carrier_shipment_ids" (
    "reference" TEXT NOT NULL,
    "shipment_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "carrier_shipment_ids_pkey" PRIMARY KEY ("reference")
);
