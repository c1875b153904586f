import { eventType } from "inngest";
import { z } from "zod";

/**
 * Starts deliver-webhook for one delivery (src/webhooks, decision 0198): sent by the lifecycle
 * outbox with the event it fans out (id `webhook-delivery-<delivery>`), and by "send again" with
 * `resend` (id `webhook-resend-<delivery>-<n>`). An internal command: nothing of the shop's
 * listens to it, and it carries no data but the delivery's id.
 */
export const webhookDeliveryRequested = eventType("shop/webhook.delivery-requested", {
  schema: z.object({
    deliveryId: z.uuid(),
    /** The endpoint: deliver-webhook's concurrency key (a burst of events is a few POSTs at a time). */
    endpointId: z.uuid(),
    resend: z.number().int().positive().optional(),
  }),
});

export const webhookDeliveryEvent = (deliveryId: string, endpointId: string) => ({
  id: `webhook-delivery-${deliveryId}`,
  name: webhookDeliveryRequested.name,
  data: { deliveryId, endpointId },
});

export const webhookResendEvent = (deliveryId: string, endpointId: string, resend: number) => ({
  id: `webhook-resend-${deliveryId}-${resend}`,
  name: webhookDeliveryRequested.name,
  data: { deliveryId, endpointId, resend },
});
