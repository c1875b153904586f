import {
  createReturnRunWork,
  createWorkContext,
  type ReturnWork,
  type ReturnWorkDeps,
} from "../../returns/return-work";
import { chargeExchangeWork, refundExchangeChargeWork } from "./charge-exchange";
import { closeReturnWork } from "./close-return";
import { emailExchangeWork } from "./email-exchange";
import { emailReturnLabelWork } from "./email-return-label";
import { refundReturnWork } from "./refund-return";
import { releaseExchangeWork, reserveExchangeWork } from "./reserve-exchange";
import { restockReturnWork } from "./restock-return";
import { buyReturnLabelWork, handBackReturnLabelWork } from "./return-label";
import { shipExchangeWork } from "./ship-exchange";
import { writeOffReturnWork } from "./write-off-return";

/**
 * What process-return touches of a return: the work each step file does (with its undo beside it),
 * gathered into the one port the steps call through `returnWorkOf`, which the fast tier stands in
 * for in memory (test/support/fakes/returns.ts); and what the function does itself
 * (src/returns/return-work.ts).
 */
export function createReturnWork(deps: ReturnWorkDeps): ReturnWork {
  const returns = createWorkContext(deps);
  return {
    ...createReturnRunWork(deps),
    buyLabel: (returnId, runId) => buyReturnLabelWork(returns, returnId, runId),
    handBackLabel: (returnId, runId) => handBackReturnLabelWork(returns, returnId, runId),
    emailLabel: (returnId, runId) => emailReturnLabelWork(returns, returnId, runId),
    refund: (returnId, runId) => refundReturnWork(returns, returnId, runId),
    restock: (returnId, runId) => restockReturnWork(returns, returnId, runId),
    writeOff: (returnId, runId) => writeOffReturnWork(returns, returnId, runId),
    close: (returnId, runId) => closeReturnWork(returns, returnId, runId),
    chargeExchange: (returnId, runId) => chargeExchangeWork(returns, returnId, runId),
    refundExchangeCharge: (returnId, runId) => refundExchangeChargeWork(returns, returnId, runId),
    reserveExchange: (returnId, runId) => reserveExchangeWork(returns, returnId, runId),
    releaseExchange: (returnId, runId) => releaseExchangeWork(returns, returnId, runId),
    shipExchange: (returnId, runId) => shipExchangeWork(returns, returnId, runId),
    emailExchange: (returnId, runId) => emailExchangeWork(returns, returnId, runId),
  };
}
