#!/usr/bin/env bash
# npm run test:mutation [group...]: StrykerJS over the exactly-once core, one module group at a
# time with only the test files that exercise it, one test process at a time (the machine is
# shared). Groups: repositories inventory email intake fulfil returns exchanges reconciliation
# reconciliation-fast label-voids label-voids-fast refunds-disputes refunds-disputes-fast returns-fast exchanges-fast return-requests-fast (default: all). Logs and the
# clear-text report go to reports/mutation/<group>.log; scores are kept in docs/mutation-testing.md.
# Each group has its own sandbox and reports, so two groups can run side by side.
# Incremental: a re-run re-tests only the mutants whose code or covering tests changed since the
# last run of the group (reports/mutation/<group>.incremental.json); STRYKER_FORCE=1 runs them all.
# STRYKER_MUTATE="src/x.ts:10-40,..." mutates only those files or lines, with the group's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p reports/mutation

# One embedded PostgreSQL for the whole pass (scripts/with-test-postgres.ts): otherwise jest's global
# setup starts one for every mutant's test run. The fast-tier groups (intake, fulfil) need none.
for group in "$@"; do
  case "$group" in repositories | inventory | email | intake | fulfil | returns | exchanges | reconciliation | reconciliation-fast | label-voids | label-voids-fast | refunds-disputes | refunds-disputes-fast | returns-fast | exchanges-fast | return-requests-fast) ;;
  *) echo "unknown mutation group '${group}' (groups: repositories inventory email intake fulfil returns exchanges reconciliation reconciliation-fast label-voids label-voids-fast refunds-disputes refunds-disputes-fast returns-fast exchanges-fast return-requests-fast)" >&2; exit 2 ;;
  esac
done
needs_database() {
  [ $# -eq 0 ] && return 0
  for group in "$@"; do
    case "$group" in intake | fulfil | label-voids-fast | reconciliation-fast | refunds-disputes-fast | returns-fast | exchanges-fast | return-requests-fast) ;; *) return 0 ;; esac
  done
  return 1
}
if [ -z "${TEST_DATABASE_URL:-}" ] && needs_database "$@"; then
  exec npx tsx scripts/with-test-postgres.ts bash "$0" "$@"
fi

run() {
  local group=$1 mutate=$2 tests=$3 timeout=${4:-60000}
  echo "== mutation group ${group}: ${mutate}"
  # The shared config with this group's JSON report (reports/mutation/<group>.json, every mutant
  # and its status), so groups running side by side do not overwrite one mutation.json.
  node -e 'const c = require("./stryker.config.json"); delete c.$schema;
    c.jsonReporter = { fileName: `reports/mutation/${process.argv[1]}.json` };
    console.log(JSON.stringify(c));' "${group}" >"reports/mutation/${group}.stryker.json"
  # timeoutMS is added to 1.5 x the covering tests' own time: a mutant that makes a polling loop
  # spin forever costs this much once, so the fast groups use a short one.
  STRYKER_TESTS="${tests}" npx stryker run "reports/mutation/${group}.stryker.json" --mutate "${STRYKER_MUTATE:-${mutate}}" --concurrency "${STRYKER_CONCURRENCY:-1}" \
    --timeoutMS "${STRYKER_TIMEOUT_MS:-${timeout}}" \
    --incremental --incrementalFile "reports/mutation/${group}.incremental.json" ${STRYKER_FORCE:+--force} \
    --tempDirName ".stryker-tmp-${group}" \
    2>&1 | tee "reports/mutation/${group}.log" | grep -E "Final mutation score|All files|^[^|]*\|.*\|" || true
}

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(repositories inventory email intake fulfil returns exchanges reconciliation reconciliation-fast label-voids label-voids-fast refunds-disputes refunds-disputes-fast returns-fast exchanges-fast return-requests-fast)
for group in "${groups[@]}"; do
  case "$group" in
    repositories) run repositories "src/orders/order-repository.ts,src/orders/fulfilment-records.ts,src/orders/redrive-order.ts" \
      "test/orders/order-repository.test.ts,test/inventory/reservation-guard.test.ts" ;;
    inventory) run inventory "src/inventory/prisma-inventory-repository.ts,src/inventory/stock-holds.ts,src/inventory/holding-inventory.ts" \
      "test/inventory/reservations.test.ts,test/inventory/reservation-guard.test.ts,test/inventory/stock-holds.test.ts,test/inventory/inventory-contract.test.ts,test/inventory/stock-holds-store.test.ts,test/inventory/partial-reservation.test.ts" ;;
    email) run email "src/notifications/email-sender.ts" \
      "test/notifications/email-sender.test.ts,test/notifications/email-outage.test.ts,test/notifications/email-sender-outbox.test.ts" 10000 ;;
    # The fast tier: createStripeIntake and its plan driven directly, ports faked in memory
    # (test/support/fakes/intake.ts), so no database (STRYKER_NO_DATABASE skips jest's global
    # setup); test/orders/stripe-webhook.test.ts stays the end-to-end check (too slow per mutant).
    intake) STRYKER_NO_DATABASE=1 run intake "src/orders/intake/stripe-intake.ts,src/orders/intake/stripe-event-plan.ts" \
      "test/orders/intake/stripe-intake.unit.test.ts,test/orders/intake/stripe-event-plan.unit.test.ts" 10000 ;;
    # The fast tier: the handler and its steps in-process on in-memory fakes (no database, engine
    # or HTTP), a few hundred ms a run; test/workflow stays the end-to-end check.
    fulfil) STRYKER_NO_DATABASE=1 run fulfil "src/inngest/functions/fulfill-order.ts,src/inngest/steps/charge-card.ts,src/inngest/steps/check-address.ts,src/inngest/steps/claim-order.ts,src/inngest/steps/compensate.ts,src/inngest/steps/context.ts,src/inngest/steps/create-shipment.ts,src/inngest/steps/finish-unfulfilled.ts,src/inngest/steps/hold-fulfilment.ts,src/inngest/steps/mark-delivered.ts,src/inngest/steps/release-stock.ts,src/inngest/steps/return-payment.ts,src/inngest/steps/reserve-stock.ts,src/inngest/steps/saga.ts,src/inngest/steps/send-confirmation.ts,src/inngest/steps/send-review-request.ts,src/inngest/steps/send-short-notice.ts" \
      "test/workflow-fast/fulfill-order.test.ts,test/workflow-fast/holds-and-redrive.test.ts,test/workflow-fast/cleanup-cancelled-order.test.ts,test/workflow-fast/saga.test.ts,test/workflow-fast/partial-fulfilment.test.ts,test/workflow-fast/parcel-outcome.test.ts,test/workflow-fast/order-gone.test.ts" 10000 ;;
    # The money paths added after the fulfilment (issue 38): their workflow suites run the real
    # engine and stand-ins, tens of seconds a run, so these groups take hours; run one at a time,
    # and with --mutate "<file>:<lines>" for the lines a change touched.
    returns) run returns "src/returns/return-work.ts,src/returns/work/context.ts,src/returns/work/settlement.ts,src/returns/work/labels.ts,src/returns/work/exchange-shipping.ts,src/inngest/steps/return-work.ts,src/inngest/steps/return-label.ts,src/inngest/steps/email-return-label.ts,src/inngest/steps/refund-return.ts,src/inngest/steps/restock-return.ts,src/inngest/steps/write-off-return.ts,src/inngest/steps/close-return.ts,src/returns/return-records.ts,src/returns/returns.ts,src/returns/return-policy.ts,src/returns/stalled-returns.ts,src/inngest/functions/process-return.ts,src/inngest/functions/recover-stalled-returns.ts" \
      "test/returns/return-policy.test.ts,test/returns/return-refund-alerts.test.ts,test/returns/late-exchange-payment.test.ts,test/workflow-fast/process-return.test.ts,test/workflow/returns.test.ts,test/workflow/replayed-return-steps.test.ts,test/workflow/return-recovery.test.ts,test/workflow/disputes-stop-refunds.test.ts" 180000 ;;
    exchanges) run exchanges "src/inngest/steps/charge-exchange.ts,src/inngest/steps/reserve-exchange.ts,src/inngest/steps/ship-exchange.ts,src/inngest/steps/email-exchange.ts,src/returns/exchange-payment-events.ts,src/payments/exchange-checkout.ts,src/returns/work/exchange-checkout.ts" \
      "test/workflow-fast/process-return.test.ts,test/workflow/exchange-charge.test.ts,test/workflow/replayed-return-steps.test.ts,test/returns/late-exchange-payment.test.ts" 240000 ;;
    reconciliation) run reconciliation "src/reconciliation/reconcile.ts,src/reconciliation/label-voids.ts,src/reconciliation/stripe-ledger.ts,src/reconciliation/carrier-ledger.ts" \
      "test/reconciliation/every-mismatch-kind.test.ts,test/reconciliation/stock-ledger-check.test.ts" 30000 ;;
    # Its fast tier, no database: the whole reconciliation (reconcile.ts) over an in-memory database
    # that answers as Prisma does (test/support/fakes/money-db.ts) and in-memory Stripe and carrier
    # ledgers, one planted case per mismatch kind (test/reconciliation/reconcile.unit.test.ts); the
    # two ledgers over in-memory Stripe and EasyPost clients (ledgers.unit.test.ts); the day's label
    # voids and the shop's calendar day. The group above stays the end-to-end check of the report.
    reconciliation-fast) STRYKER_NO_DATABASE=1 run reconciliation-fast "src/reconciliation/reconcile.ts,src/reconciliation/stripe-ledger.ts,src/reconciliation/carrier-ledger.ts,src/reconciliation/label-voids.ts,src/reconciliation/shop-day.ts" \
      "test/reconciliation/reconcile.unit.test.ts,test/reconciliation/ledgers.unit.test.ts,test/reconciliation/label-voids.unit.test.ts,test/reconciliation/shop-day.test.ts" 10000 ;;
    label-voids) run label-voids "src/shipping/label-void.ts" \
      "test/workflow/label-void.test.ts,test/workflow/cancellation.test.ts" 120000 ;;
    # The same module's fast tier: LabelVoids over in-memory ports (test/shipping/label-void.test.ts),
    # no database, well under a second a run; the group above stays the end-to-end check.
    label-voids-fast) STRYKER_NO_DATABASE=1 run label-voids-fast "src/shipping/label-void.ts" \
      "test/shipping/label-void.test.ts" 10000 ;;
    refunds-disputes) run refunds-disputes "src/orders/refund-order.ts,src/orders/disputed-amount.ts,src/orders/intake/refund-events.ts,src/orders/intake/risk-events.ts" \
      "test/orders/refunds.test.ts,test/orders/intake/dispute-states.test.ts,test/workflow/disputes-stop-refunds.test.ts,test/orders/intake/stripe-intake.unit.test.ts" 120000 ;;
    # Their fast tier: the refund use case and the refund and dispute intake over an in-memory
    # database that answers as Prisma does and an in-memory Stripe (test/support/fakes/money-*.ts),
    # no database; the group above stays the end-to-end check.
    refunds-disputes-fast) STRYKER_NO_DATABASE=1 run refunds-disputes-fast "src/orders/refund-order.ts,src/orders/disputed-amount.ts,src/orders/intake/refund-events.ts,src/orders/intake/risk-events.ts" \
      "test/orders/refund-order.unit.test.ts,test/orders/intake/refund-events.unit.test.ts,test/orders/intake/risk-events.unit.test.ts" 10000 ;;
    # The returns' fast tier: process-return on the step driver with its port in memory
    # (test/workflow-fast/process-return.test.ts), and the steps' own work over in-memory records,
    # carrier and mail with the real refund use case on the in-memory database and Stripe
    # (test/returns/return-steps.unit.test.ts); no database. The records (raw SQL), the request
    # use cases (returns.ts) and the sweep are in return-requests-fast below; `returns` covers them too.
    returns-fast) STRYKER_NO_DATABASE=1 run returns-fast "src/inngest/functions/process-return.ts,src/inngest/steps/return-label.ts,src/inngest/steps/email-return-label.ts,src/inngest/steps/refund-return.ts,src/inngest/steps/restock-return.ts,src/inngest/steps/write-off-return.ts,src/inngest/steps/close-return.ts,src/inngest/steps/return-context.ts,src/inngest/steps/return-work.ts,src/returns/return-work.ts,src/returns/work/context.ts,src/returns/work/settlement.ts,src/returns/work/labels.ts,src/returns/work/exchange-shipping.ts,src/returns/return-policy.ts" \
      "test/workflow-fast/process-return.test.ts,test/workflow-fast/process-return-paths.test.ts,test/returns/return-steps.unit.test.ts,test/returns/return-policy.test.ts" 10000 ;;
    # The exchange steps' own work over the same in-memory ports (test/returns/exchange-steps.unit.test.ts),
    # and process-return's exchange path on the step driver; the Checkout payment of the difference
    # (its page, settlement, expiry and webhook) over the same records and an in-memory Stripe
    # (test/support/fakes/checkout-stripe.ts); no database. The group above stays the end-to-end check.
    exchanges-fast) STRYKER_NO_DATABASE=1 run exchanges-fast "src/inngest/steps/charge-exchange.ts,src/inngest/steps/reserve-exchange.ts,src/inngest/steps/ship-exchange.ts,src/inngest/steps/email-exchange.ts,src/returns/work/exchange-charge.ts,src/returns/work/exchange-checkout.ts,src/returns/exchange-payment-events.ts,src/payments/exchange-checkout.ts" \
      "test/returns/exchange-steps.unit.test.ts,test/workflow-fast/process-return.test.ts,test/returns/exchange-checkout-work.unit.test.ts,test/returns/exchange-payment-events.unit.test.ts,test/payments/exchange-checkout.unit.test.ts" 10000 ;;
    # The return's request use cases (returns.ts: request, approve, reject, receive, close over the
    # records, the publisher and the timeline; FakeReturnDesk in test/support/fakes/returns.ts) and
    # the sweep's function on the step driver; no database. The sweep's SQL (stalled-returns.ts)
    # stays in `returns`: with no database its statements' mutants would all survive.
    return-requests-fast) STRYKER_NO_DATABASE=1 run return-requests-fast "src/returns/returns.ts,src/inngest/functions/recover-stalled-returns.ts" \
      "test/returns/return-requests.unit.test.ts,test/workflow-fast/recover-stalled-returns.test.ts" 10000 ;;
    *) echo "unknown group ${group}" >&2; exit 2 ;;
  esac
done
