import { Router } from "express";
import { orderReference } from "../../notifications/templates";
import { sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout } from "./layout";
import { Runs } from "./runs-view";

/** GET /ops/runs/:runId: one run, and the order it worked on. */
export function runPage(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.get("/ops/runs/:runId", async (req, res) => {
    const source = deps.runs;
    const run = source ? await source.run(String(req.params.runId)).catch(() => undefined) : undefined;
    const orderId = run ? await deps.queries.orderOfRun(run.runId) : null;
    sendPage(
      res,
      <OpsLayout title={`Run ${req.params.runId}`} csrf={csrfOf(deps, req)}>
        <h1>Run</h1>
        {orderId ? (
          <p>
            Order <a href={`/ops/orders/${orderId}`}>{orderReference(orderId)}</a>
          </p>
        ) : null}
        <div class="card">
          {run ? (
            <Runs
              runs={[{ ...run, dashboardUrl: `/ops/runs/${run.runId}` }]}
              {...(source ? { source } : {})}
            />
          ) : (
            <p>No such run.</p>
          )}
        </div>
      </OpsLayout>,
      run ? 200 : 404,
    );
  });
  return router;
}
