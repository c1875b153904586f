import { NonRetriableError, type Inngest } from "inngest";
import {
  exchangePaid,
  returnApproved,
  returnCancelled,
  returnReceived,
  returnRequested,
} from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";
import { closeReturn } from "../steps/close-return";
import { emailReturnLabel } from "../steps/email-return-label";
import { refundReturn } from "../steps/refund-return";
import { restockReturn } from "../steps/restock-return";
import { createReturnLabel } from "../steps/return-label";
import { runUndos, Saga, undosOf } from "../steps/saga";
import { writeOffReturn } from "../steps/write-off-return";
import { chargeExchange, refundExchangeCharge } from "../steps/charge-exchange";
import { releaseExchange, reserveExchange } from "../steps/reserve-exchange";
import { shipExchange } from "../steps/ship-exchange";
import { emailExchange } from "../steps/email-exchange";

/** The step that tells the timeline and ops an exchange's parcel could not be booked; durable state. */
export const exchangeFailedStepId = "exchange-failed";

export const processReturnFunctionId = "process-return";

/**
 * The steps of a difference paid on a Checkout page (the bank refused it off-session with
 * authentication_required); their ids are durable Inngest state.
 */
export const exchangeCheckoutStepIds = {
  create: "create-exchange-checkout",
  email: "email-exchange-checkout",
  check: (slice: number) => `check-exchange-payment-${slice}`,
  wait: (slice: number) => `wait-exchange-payment-${slice}`,
  expire: "expire-exchange-checkout",
  unpaid: "close-unpaid-exchange",
} as const;

/** process-return's forward steps, in the order it runs them; their ids are durable Inngest state. */
export const returnSteps = [
  createReturnLabel,
  emailReturnLabel,
  chargeExchange,
  reserveExchange,
  shipExchange,
  emailExchange,
  refundReturn,
  restockReturn,
  writeOffReturn,
  closeReturn,
] as const;

/** What a return can come to owe (the unused label handed back): the cancel cleanup runs these. */
export const returnUndos = undosOf(returnSteps);

/**
 * Runs one return after delivery: (wait for ops' approval, when RETURN_APPROVAL=ops) → buy the
 * EasyPost return label → e-mail it → wait for the parcel (its tracker's delivery, or ops
 * receiving it by hand) → refund the returned lines less the restocking fee → restock them, or
 * write them off when damaged → (an exchange: charge a dearer item's difference off-session,
 * reserve, ship and e-mail the new items; a refused charge stops the run there, the return
 * open for ops, except one the bank wants the customer present for: the new items are reserved,
 * a Stripe Checkout page for the difference e-mailed, and the run waits EXCHANGE_PAYMENT_WINDOW
 * for shop/exchange.paid (paid: it ships; never paid: the page expired, the items released, the
 * exchange closed unpaid); with
 * EXCHANGE_SHIPS=at_once right after the label instead) → close. One run per return (idempotency by its id); a reject or a
 * close by ops cancels it (cancelOn shop/return.cancelled), and cleanup-cancelled-return hands
 * the unused label back. No parcel within RETURN_SHIP_WITHIN: the label is handed back and the
 * return cancelled.
 *
 * Waiting: Inngest's waitForEvent only hears events sent after the wait began, so each wait is
 * preceded by a read of the return, and lasts a slice (a day) before the return is read again: a
 * decision that lands in the instant between a read and its wait is seen at the next read.
 */
export function createProcessReturn(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: processReturnFunctionId,
      name: "Process a return",
      triggers: [returnRequested],
      idempotency: "event.data.returnId",
      retries: 5,
      cancelOn: [{ event: returnCancelled.name, if: "async.data.returnId == event.data.returnId" }],
      onFailure: async ({ event, error }) => {
        const original = event.data.event.data;
        await deps.alerts.runFailed({
          functionId: event.data.function_id,
          runId: event.data.run_id,
          orderId: original.orderId,
          error: { name: error.name, message: error.message },
        });
      },
    },
    async ({ event, step, runId }) => {
      const { returnId, orderId } = event.data;
      const wired = deps.returns;
      if (!wired) throw new NonRetriableError("returns are not wired in this deployment");
      const returns = wired;
      const saga = new Saga({ step, deps, orderId, runId, returnId });

      /** Reads the return until `done` says so, waiting for `event` between reads. */
      async function waitFor(
        name: "approval" | "parcel",
        event: typeof returnApproved | typeof returnReceived,
        done: (status: string) => boolean,
      ) {
        for (let slice = 0; ; slice++) {
          const current = await step.run(`check-${name}-${slice}`, async () => {
            // The run has the return: recover-stalled-returns leaves it alone from now on.
            if (name === "approval" && slice === 0) await returns.stalled?.markRunStarted(returnId);
            const row = await returns.work.load(returnId);
            return { status: row.status, condition: row.condition, exchange: returns.work.isExchange(row) };
          });
          if (done(current.status) || ["rejected", "cancelled", "closed"].includes(current.status))
            return current;
          if (slice >= returns.waitSlices) return null;
          await step.waitForEvent(`wait-${name}-${slice}`, {
            event,
            timeout: returns.waitSlice,
            if: "async.data.returnId == event.data.returnId",
          });
        }
      }

      const approval = await waitFor("approval", returnApproved, (status) => status !== "requested");
      if (!approval) {
        await step.run("expire-return", () => returns.work.expire(returnId, runId));
        return { returnId, outcome: "not-approved" as const };
      }
      if (["rejected", "cancelled", "closed"].includes(approval.status)) {
        return { returnId, outcome: approval.status };
      }

      /**
       * The exchange's new items: a dearer one's difference charged first, then reserved, shipped
       * on their own label and the tracking e-mailed (once a run). `refused` when the bank refused
       * the difference: nothing is reserved or shipped, and the return waits for ops; `ended` when
       * ops ended the return meanwhile (the charge, if taken, given back by the step).
       */
      /**
       * The difference on a Checkout page: its session created and its URL e-mailed (once each),
       * then read-then-wait in slices for shop/exchange.paid (the webhook's, after it recorded the
       * payment) until EXCHANGE_PAYMENT_WINDOW ends; then the session is expired at Stripe and its
       * answer decides (paid meanwhile: paid). `ended`: ops ended the return meanwhile.
       */
      async function awaitExchangePayment(): Promise<"paid" | "unpaid" | "ended"> {
        const ids = exchangeCheckoutStepIds;
        const session = await step.run(ids.create, () => returns.work.createExchangeCheckout(returnId));
        if (session.url)
          await step.run(ids.email, () =>
            returns.work.emailExchangeCheckout(returnId, runId, session.url ?? "", session.expiresAt),
          );
        for (let slice = 0; ; slice++) {
          const state = await step.run(ids.check(slice), () => returns.work.exchangePaymentState(returnId));
          if (state.charge === "charged") return "paid";
          if (["rejected", "cancelled", "closed"].includes(state.status)) return "ended";
          if (state.charge !== "awaiting_payment") return "ended";
          if (slice >= returns.paymentSlices) break;
          await step.waitForEvent(ids.wait(slice), {
            event: exchangePaid,
            timeout: returns.paymentSlice,
            if: "async.data.returnId == event.data.returnId",
          });
        }
        const expired = await step.run(ids.expire, () =>
          returns.work.expireExchangeCheckout(returnId, runId),
        );
        return expired.outcome;
      }

      let exchangeOutcome: "sent" | "refused" | "ended" | "unpaid" | null = null;
      async function sendExchange(): Promise<"sent" | "refused" | "ended" | "unpaid"> {
        if (exchangeOutcome) return exchangeOutcome;
        const charge = await saga.run(chargeExchange);
        if (charge.outcome === "failed") return (exchangeOutcome = "refused");
        if (charge.outcome === "ended" || charge.outcome === "refunded") return (exchangeOutcome = "ended");
        // Paid on the Checkout page: the charge the undo refunds is that payment.
        let paidOnCheckout = false;
        if (charge.outcome === "awaiting-payment") {
          // The new items are held for the customer while they pay.
          await saga.run(reserveExchange);
          const payment = await awaitExchangePayment();
          if (payment !== "paid") {
            await runUndos(saga.ctx, [releaseExchange]);
            if (payment === "unpaid")
              await step.run(exchangeCheckoutStepIds.unpaid, () =>
                returns.work.closeUnpaidExchange(returnId, runId),
              );
            return (exchangeOutcome = payment);
          }
          paidOnCheckout = true;
        }
        exchangeOutcome = "sent";
        try {
          if (!paidOnCheckout) await saga.run(reserveExchange);
          await saga.run(shipExchange);
        } catch (error) {
          // The parcel could not be booked, retries spent: the new items go back on the shelf and
          // the difference back to the card, then the run fails for ops (its alert).
          const owed = saga.owed.filter((undo) => undo === releaseExchange || undo === refundExchangeCharge);
          if (paidOnCheckout && !owed.includes(refundExchangeCharge)) owed.push(refundExchangeCharge);
          await runUndos(saga.ctx, owed);
          const reason = error instanceof Error ? error.message : String(error);
          await step.run(exchangeFailedStepId, () => returns.work.failExchange(returnId, runId, reason));
          throw error;
        }
        await saga.run(emailExchange);
        return "sent";
      }
      const stopped = (outcome: "refused" | "ended" | "unpaid") => ({
        returnId,
        outcome:
          outcome === "refused"
            ? ("exchange-charge-failed" as const)
            : outcome === "unpaid"
              ? ("exchange-unpaid" as const)
              : ("ended" as const),
      });
      const shipsAtOnce = approval.exchange && returns.exchangeShips === "at_once";

      let received = approval.status === "received" ? approval : null;
      if (!received) {
        await saga.run(createReturnLabel);
        await saga.run(emailReturnLabel);
        // A shop that trusts its customers sends the exchange before the return is back.
        if (shipsAtOnce) {
          const sent = await sendExchange();
          if (sent !== "sent") return stopped(sent);
        }
        const parcel = await waitFor("parcel", returnReceived, (status) => status === "received");
        if (!parcel || parcel.status !== "received") {
          // No parcel in time (or ended by ops meanwhile): the unused label goes back to the carrier.
          await runUndos(saga.ctx, saga.owed);
          if (!parcel) await step.run("expire-return", () => returns.work.expire(returnId, runId));
          return { returnId, outcome: parcel?.status ?? ("expired" as const) };
        }
        received = parcel;
      }

      const refund = await saga.run(refundReturn);
      if (received.condition === "damaged") await saga.run(writeOffReturn);
      else await saga.run(restockReturn);
      // Sent already (at once) is not sent again.
      if (approval.exchange) {
        const sent = await sendExchange();
        if (sent !== "sent") return stopped(sent);
      }
      await saga.run(closeReturn);
      return { returnId, outcome: "closed" as const, refunded: refund.amount, condition: received.condition };
    },
  );
}
