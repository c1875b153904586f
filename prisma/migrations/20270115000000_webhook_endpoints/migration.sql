-- Signed outbound webhooks (issue 40, decision 0198): endpoints a shop registers, one delivery per
-- lifecycle event and subscribed endpoint, and each attempt at it.
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "url" TEXT NOT NULL,
    "description" TEXT,
    "event_types" TEXT[] NOT NULL,
    -- Standard Webhooks secrets (whsec_<base64>): needed in clear to sign, never shown after creation.
    "secret" TEXT NOT NULL,
    -- The secret before the last rotation, still signed with until it expires (the overlap).
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    -- The first failed attempt since the last success: the endpoint is disabled once it is old enough.
    "failing_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "webhook_deliveries" (
    -- Also the webhook-id header: the same on every attempt and on "send again".
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "event_id" TEXT NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "event_name" TEXT NOT NULL,
    "order_id" UUID,
    -- pending (attempts to come), delivered, failed (out of attempts), skipped (endpoint disabled).
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_response" TEXT,
    "last_error" TEXT,
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    -- Each "send again" takes the next number: its event id and attempt key.
    "resends" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- One delivery per event and endpoint, however often the fan-out runs.
CREATE UNIQUE INDEX "webhook_deliveries_event_id_endpoint_id_key" ON "webhook_deliveries"("event_id", "endpoint_id");
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_idx" ON "webhook_deliveries"("endpoint_id", "created_at");
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey"
  FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "webhook_attempts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" UUID NOT NULL,
    -- <delivery id>:<n> for the scheduled attempts, <delivery id>:again-<n> for "send again".
    "attempt_key" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "ok" BOOLEAN,
    "status_code" INTEGER,
    "response_excerpt" TEXT,
    "error" TEXT,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "webhook_attempts_attempt_key_key" ON "webhook_attempts"("attempt_key");
CREATE INDEX "webhook_attempts_delivery_id_id_idx" ON "webhook_attempts"("delivery_id", "id");
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey"
  FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The fan-out: in the transaction that writes the lifecycle event (itself the fact's), one delivery
-- per enabled endpoint subscribed to it. A fact rolled back leaves no delivery; a fact committed
-- always has its deliveries; the unique key keeps a repeated insert to one.
CREATE FUNCTION webhook_deliveries_from_outbox() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (event_id, endpoint_id, event_name, order_id)
  SELECT NEW.event_id, e.id, NEW.name, NEW.order_id
  FROM webhook_endpoints e
  WHERE e.enabled AND NEW.name = ANY (e.event_types)
  ON CONFLICT (event_id, endpoint_id) DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER "lifecycle_outbox_webhook_deliveries" AFTER INSERT ON "lifecycle_outbox"
FOR EACH ROW EXECUTE FUNCTION webhook_deliveries_from_outbox();
