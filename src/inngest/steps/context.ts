import type { GetStepTools, Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

/** What every step function of fulfill-order and cleanup-cancelled-order works with. */
export interface StepContext {
  step: GetStepTools<Inngest>;
  deps: WorkflowDependencies;
  orderId: string;
  runId: string;
  /** The return process-return works on (its steps need it; fulfilment's do not). */
  returnId?: string;
}

/** The run's hold on the order, from the claim step: every guarded write names it. */
export interface Claim {
  claimId: string;
  paymentIntentId: string | null;
  lines: { sku: string; quantity: number }[];
  /** Re-driven after its parcel was booked: stock, payment and label are done already. */
  booked?: boolean;
}
