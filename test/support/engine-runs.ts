import { decrypted } from "./encryption";

/** A run as the local engine's REST API (`GET /v1/events/:id/runs`) describes it. */
export interface RunView {
  run_id: string;
  function_id: string;
  status: "Running" | "Completed" | "Failed" | "Cancelled";
  output: unknown;
  error?: { name: string; message: string } | null;
}

/** The runs an event started, from the engine at `engineUrl`; outputs decrypted with the test key. */
export async function runsOfEvent(engineUrl: string, eventId: string): Promise<RunView[]> {
  const res = await fetch(`${engineUrl}/v1/events/${encodeURIComponent(eventId)}/runs`);
  const runs = ((await res.json()) as { data: RunView[] }).data;
  return Promise.all(runs.map(async (run) => ({ ...run, output: await decrypted(run.output) })));
}
