import { formatTime } from "../layout";
import type { RunSource, RunSummary } from "./runs";

/** An order's Inngest runs, step by step, from the run source (the engine's or Inngest's API). */
export function Runs(props: {
  runs: RunSummary[];
  source?: RunSource;
  failure?: string;
  /** Attempts of failed steps, by run and step, from the timeline's step-failed entries. */
  attempts?: Map<string, number>;
}) {
  if (!props.source) return <p class="muted">No Inngest run source is configured.</p>;
  return (
    <>
      <p class="muted small">From {props.source.label}.</p>
      {props.failure ? <p class="error">{props.failure}</p> : null}
      {props.runs.length === 0 ? <p class="muted">No runs recorded for this order yet.</p> : null}
      {props.runs.map((run) => (
        <div key={run.runId} class="run" data-run-status={run.status}>
          <h3 class="step-title">
            {run.functionId}{" "}
            <span class={`badge ${run.status === "Failed" ? "bad" : run.status === "Completed" ? "ok" : ""}`}>
              {run.status}
            </span>{" "}
            <a class="small" href={run.dashboardUrl}>
              open run
            </a>
          </h3>
          <p class="small muted">
            Run <code>{run.runId}</code> · started {formatTime(run.startedAt)} · ended{" "}
            {formatTime(run.endedAt)}
          </p>
          {run.error ? <p class="error small">Run error: {run.error}</p> : null}
          <table class="small">
            <thead>
              <tr>
                <th>Step</th>
                <th>Status</th>
                <th>Attempts</th>
                <th class="hide">Finished</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {run.steps.map((step) => (
                <tr key={step.id} data-step={step.name} data-step-status={step.status}>
                  <td>{step.name}</td>
                  <td>
                    <span class={`badge ${step.status === "Failed" ? "bad" : "ok"}`}>{step.status}</span>
                  </td>
                  <td>{props.attempts?.get(`${run.runId} ${step.name}`) ?? ""}</td>
                  <td class="hide">{formatTime(step.completedAt)}</td>
                  <td class="error">{step.error ?? ""}</td>
                </tr>
              ))}
              {run.pending.map((job) => (
                <tr key={`pending-${job.name}`}>
                  <td>{job.name}</td>
                  <td>
                    <span class="badge warn">
                      {job.kind === "call" && job.attempt > 0 ? "Retrying" : "Waiting"}
                    </span>
                  </td>
                  <td>{job.attempt > 0 ? job.attempt + 1 : ""}</td>
                  <td class="hide">next {formatTime(job.runAt)}</td>
                  <td />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}
