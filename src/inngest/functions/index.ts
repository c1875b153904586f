import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";
import { createCleanupCancelledOrder } from "./cleanup-cancelled-order";
import { createFulfillOrder } from "./fulfill-order";

/** Every Inngest function this app serves. */
export function createFunctions(inngest: Inngest, deps: WorkflowDependencies) {
  return [createFulfillOrder(inngest, deps), createCleanupCancelledOrder(inngest, deps)];
}
