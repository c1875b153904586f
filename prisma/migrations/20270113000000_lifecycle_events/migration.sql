-- Lifecycle events (issue 40, decision 0196): a transactional outbox. A trigger on the facts the
-- service already records (order_timeline rows, a product's low-stock mark) writes the event in
-- the same transaction, so a fact rolled back leaves no event and a fact committed always has
-- one. Its id is derived from the fact (an order is paid once, a refund has its Stripe id), and
-- unique here, so a fact recorded twice (a replayed step, a re-drive) is still one event; the
-- sender publishes it to Inngest with that id, so a resend after a crash is deduplicated there.
CREATE TABLE "lifecycle_outbox" (
    "id" BIGSERIAL NOT NULL,
    "event_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "order_id" UUID,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "lifecycle_outbox_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "lifecycle_outbox_event_id_key" ON "lifecycle_outbox"("event_id");
CREATE INDEX "lifecycle_outbox_sent_at_id_idx" ON "lifecycle_outbox"("sent_at", "id");
CREATE INDEX "lifecycle_outbox_order_id_idx" ON "lifecycle_outbox"("order_id");

CREATE FUNCTION lifecycle_outbox_put(event_id TEXT, name TEXT, order_id UUID, data JSONB) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO lifecycle_outbox (event_id, name, order_id, data)
  -- Prefixed: Inngest deduplicates by id across event names, and a command of the workflow may
  -- carry the same fact's id (return-requested-<id> starts process-return).
  VALUES ('lifecycle-' || $1, $2, $3, $4) ON CONFLICT (event_id) DO NOTHING;
  -- Delivered at commit only (never for a rolled-back fact); the sender also sweeps.
  SELECT pg_notify('lifecycle_outbox', '');
$$;

CREATE FUNCTION lifecycle_utc(at TIMESTAMPTZ) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
$$;

-- Each timeline kind that is a lifecycle fact, as its event: name, id and data (src/events/lifecycle.ts).
CREATE FUNCTION lifecycle_outbox_from_timeline() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  o RECORD;
  d JSONB := NEW.detail;
  fact JSONB := jsonb_build_object('orderId', NEW.order_id, 'occurredAt', lifecycle_utc(NEW.created_at));
  order_key TEXT := NEW.order_id::text;
  parcel JSONB;
BEGIN
  SELECT total, currency, customer_id INTO o FROM orders WHERE id = NEW.order_id;
  CASE
    WHEN NEW.kind IN ('payment-received', 'payment-not-required', 'payment-captured') THEN
      PERFORM lifecycle_outbox_put('order-paid-' || order_key, 'shop/order.paid.v1', NEW.order_id,
        fact || jsonb_build_object(
          'amount', CASE WHEN jsonb_typeof(d->'amount') = 'number' THEN (d->>'amount')::int ELSE o.total END,
          'currency', lower(o.currency), 'customerId', o.customer_id));
    WHEN NEW.kind = 'hold-placed' THEN
      PERFORM lifecycle_outbox_put('order-fulfilment-held-' || order_key || '-' || NEW.id, 'shop/order.fulfilment-held.v1',
        NEW.order_id, fact || jsonb_build_object('reason', coalesce(d->>'reason', 'ops'))
          || CASE WHEN d ? 'note' THEN jsonb_build_object('note', d->>'note') ELSE '{}'::jsonb END);
    WHEN NEW.kind = 'hold-released' THEN
      PERFORM lifecycle_outbox_put('order-fulfilment-released-' || order_key || '-' || NEW.id,
        'shop/order.fulfilment-released.v1', NEW.order_id,
        fact || jsonb_build_object('reason', coalesce(d->>'reason', 'ops')));
    WHEN NEW.kind IN ('shipment-booked', 'parcel-reshipped') THEN
      FOR parcel IN SELECT value FROM jsonb_array_elements(
          CASE WHEN jsonb_typeof(d->'parcels') = 'array' THEN d->'parcels' ELSE jsonb_build_array(d) END)
      LOOP
        CONTINUE WHEN coalesce(parcel->>'trackingNumber', '') = '';
        PERFORM lifecycle_outbox_put('order-shipped-' || order_key || '-' || (parcel->>'trackingNumber'),
          'shop/order.shipped.v1', NEW.order_id,
          fact || jsonb_build_object(
            'parcelNumber', coalesce((parcel->>'parcelNumber')::int, 1),
            'carrier', coalesce(parcel->>'carrier', d->>'carrier', 'unknown'),
            'trackingNumber', parcel->>'trackingNumber',
            'trackingUrl', CASE WHEN parcel->>'trackingNumber' = d->>'trackingNumber'
                                THEN d->'trackingUrl' ELSE parcel->'trackingUrl' END));
      END LOOP;
    WHEN NEW.kind IN ('delivered', 'nothing-to-ship') THEN
      PERFORM lifecycle_outbox_put('order-delivered-' || order_key, 'shop/order.delivered.v1', NEW.order_id, fact);
    WHEN NEW.kind IN ('cancelled', 'cancelled-out-of-stock') THEN
      PERFORM lifecycle_outbox_put('order-cancelled-' || order_key, 'shop/order.cancelled.v1', NEW.order_id,
        fact || jsonb_build_object('reason',
          CASE NEW.kind WHEN 'cancelled' THEN 'cancelled' ELSE 'out-of-stock' END));
    WHEN NEW.kind IN ('refund-issued', 'refund-recorded', 'payment-refunded', 'short-lines-refunded') THEN
      -- Keyed by Stripe's refund: an ops refund that Stripe's webhook reports again is one event.
      IF coalesce((d->>'amount')::int, 0) > 0 THEN
        PERFORM lifecycle_outbox_put(
          'order-refunded-' || coalesce(d->>'stripeRefund', d->>'refundId', order_key || '-' || NEW.id),
          'shop/order.refunded.v1', NEW.order_id,
          fact || jsonb_build_object(
            'refundId', coalesce(d->>'stripeRefund', d->>'refundId', NEW.id::text),
            'amount', (d->>'amount')::int,
            'currency', lower(coalesce(d->>'currency', o.currency)),
            -- A return's refund goes through the same refund path, with the return's id as its own.
            'source', CASE WHEN NEW.kind = 'refund-issued' AND EXISTS (
                             SELECT 1 FROM returns WHERE id::text = d->>'refundId') THEN 'return'
                           WHEN NEW.kind = 'refund-issued' THEN 'ops'
                           WHEN NEW.kind = 'refund-recorded' THEN 'stripe-dashboard'
                           ELSE 'workflow' END));
      END IF;
    WHEN NEW.kind = 'return-refunded' THEN
      PERFORM lifecycle_outbox_put('return-refunded-' || (d->>'returnId'), 'shop/return.refunded.v1',
        NEW.order_id, fact || jsonb_build_object('returnId', d->>'returnId',
          'amount', coalesce((d->>'amount')::int, 0), 'fee', coalesce((d->>'fee')::int, 0),
          'currency', lower(o.currency)));
      IF coalesce((d->>'amount')::int, 0) > 0 THEN
        PERFORM lifecycle_outbox_put(
          'order-refunded-' || coalesce(d->>'stripeRefund', 'return-' || (d->>'returnId')),
          'shop/order.refunded.v1', NEW.order_id,
          fact || jsonb_build_object('refundId', coalesce(d->>'stripeRefund', d->>'returnId'),
            'amount', (d->>'amount')::int, 'currency', lower(o.currency), 'source', 'return'));
      END IF;
    WHEN NEW.kind = 'dispute-updated' THEN
      -- A lost dispute: the money the bank withdrew is the refund.
      IF d->>'status' = 'lost' AND coalesce((d->>'amount')::int, 0) > 0 THEN
        PERFORM lifecycle_outbox_put('order-refunded-' || (d->>'dispute'), 'shop/order.refunded.v1',
          NEW.order_id, fact || jsonb_build_object('refundId', d->>'dispute',
            'amount', (d->>'amount')::int, 'currency', lower(coalesce(d->>'currency', o.currency)),
            'source', 'dispute'));
      END IF;
    WHEN NEW.kind = 'payment-failed' THEN
      PERFORM lifecycle_outbox_put('order-failed-' || order_key, 'shop/order.failed.v1', NEW.order_id,
        fact || jsonb_build_object('reason', 'payment-failed'));
    WHEN NEW.kind = 'run-failed' THEN
      PERFORM lifecycle_outbox_put('order-failed-' || order_key || '-' || NEW.id, 'shop/order.failed.v1',
        NEW.order_id, fact || jsonb_build_object('reason', 'run-failed'));
    WHEN NEW.kind = 'return-requested' THEN
      PERFORM lifecycle_outbox_put('return-requested-' || (d->>'returnId'), 'shop/return.requested.v1',
        NEW.order_id, fact || jsonb_build_object('returnId', d->>'returnId'));
    WHEN NEW.kind = 'return-received' THEN
      PERFORM lifecycle_outbox_put('return-received-' || (d->>'returnId'), 'shop/return.received.v1',
        NEW.order_id, fact || jsonb_build_object('returnId', d->>'returnId',
          'condition', CASE WHEN d->>'condition' IN ('resellable', 'damaged') THEN d->'condition'
                            ELSE 'null'::jsonb END));
    ELSE
      NULL;
  END CASE;
  RETURN NULL;
END $$;

-- The WHEN clause keeps every other timeline insert (most of them) free of the function call.
CREATE TRIGGER "order_timeline_lifecycle_outbox" AFTER INSERT ON "order_timeline"
FOR EACH ROW WHEN (NEW.kind IN ('payment-received', 'payment-not-required', 'payment-captured',
  'hold-placed', 'hold-released', 'shipment-booked', 'parcel-reshipped', 'delivered', 'nothing-to-ship',
  'cancelled', 'cancelled-out-of-stock', 'refund-issued', 'refund-recorded', 'payment-refunded',
  'short-lines-refunded', 'return-refunded', 'dispute-updated', 'payment-failed', 'run-failed',
  'return-requested', 'return-received'))
EXECUTE FUNCTION lifecycle_outbox_from_timeline();

-- A product's low-stock mark set (src/inventory/low-stock.ts): one event per crossing.
CREATE FUNCTION lifecycle_outbox_from_low_stock() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM lifecycle_outbox_put(
    'stock-low-' || NEW.sku || '-' || (extract(epoch FROM NEW.low_stock_alerted_at) * 1000)::bigint,
    'shop/stock.low.v1', NULL,
    jsonb_build_object('sku', NEW.sku, 'stockOnHand', NEW.stock_on_hand,
      'threshold', coalesce(NEW.low_stock_threshold, 0), 'occurredAt', lifecycle_utc(NEW.low_stock_alerted_at)));
  RETURN NULL;
END $$;

CREATE TRIGGER "products_lifecycle_low_stock" AFTER UPDATE OF "low_stock_alerted_at" ON "products"
FOR EACH ROW WHEN (OLD.low_stock_alerted_at IS NULL AND NEW.low_stock_alerted_at IS NOT NULL)
EXECUTE FUNCTION lifecycle_outbox_from_low_stock();
