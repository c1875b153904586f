/** A run as the local engine's REST API (`GET /v1/events/:id/runs`) describes it. */
export interface RunView {
  run_id: string;
  function_id: string;
  status: "Running" | "Completed" | "Failed" | "Cancelled";
  output: unknown;
  error?: { name: string; message: string } | null;
}

/** The runs an event started, from the engine at `engineUrl`. */
export async function runsOfEvent(engineUrl: string, eventId: string): Promise<RunView[]> {
  const res = await fetch(`${engineUrl}/v1/events/${encodeURIComponent(eventId)}/runs`);
  return ((await res.json()) as { data: RunView[] }).data;
}
