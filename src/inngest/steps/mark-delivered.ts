import type { ShipmentDeliveredData } from "../../events/contracts";
import { createStep } from "./saga";

export const markDeliveredStepId = "mark-delivered";

/** Records the carrier's delivery notice: the order moves from `shipped` to `delivered`, once. */
export const markDelivered = createStep({
  id: markDeliveredStepId,
  invoke: ({ step, deps, orderId, runId }, delivery: ShipmentDeliveredData) =>
    step.run(markDeliveredStepId, async () => {
      await deps.orders.transition(orderId, ["shipped"], "delivered", {
        kind: "delivered",
        detail: { deliveredAt: delivery.deliveredAt },
        runId,
      });
    }),
});
