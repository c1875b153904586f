/**
 * The Inngest runs of an order, for the ops console. In development the local engine (or the
 * Inngest dev server) answers `GET /v1/runs/:id` with the run and its steps; in production the
 * Inngest REST API answers the same path with the run (status, timing, output), authenticated
 * with the signing key; its steps are only in the dashboard, which every run links to.
 */
export interface RunStep {
  id: string;
  name: string;
  status: string;
  error?: string;
  completedAt?: string;
}

export interface RunPending {
  name: string;
  kind: string;
  attempt: number;
  runAt?: string;
}

export interface RunSummary {
  runId: string;
  functionId: string;
  status: string;
  startedAt?: string;
  endedAt?: string;
  error?: string;
  steps: RunStep[];
  pending: RunPending[];
  dashboardUrl: string;
}

export interface RunSource {
  /** Where the runs come from, shown on the page. */
  readonly label: string;
  run(runId: string): Promise<RunSummary | undefined>;
  dashboardUrl(runId: string): string;
}

interface RawError {
  name?: string;
  message?: string;
}

interface RawRun {
  run_id: string;
  function_id?: string;
  status?: string;
  run_started_at?: string;
  started_at?: string;
  ended_at?: string | null;
  error?: RawError | null;
  output?: unknown;
  steps?: {
    id: string;
    name?: string | null;
    status?: string;
    error?: RawError | null;
    completed_at?: string;
  }[];
  pending?: { name?: string | null; step_id: string; kind: string; attempt: number; run_at?: string }[];
}

const errorText = (error: RawError | null | undefined): string | undefined =>
  error ? [error.name, error.message].filter(Boolean).join(": ") : undefined;

export function createRunSource(options: {
  /** http://127.0.0.1:8288 (local engine or dev server) or https://api.inngest.com. */
  apiBase: string;
  signingKey?: string;
  label: string;
  runUrlTemplate: string;
  fetchImpl?: typeof fetch;
}): RunSource {
  const fetchImpl = options.fetchImpl ?? fetch;
  const dashboardUrl = (runId: string) =>
    options.runUrlTemplate.replaceAll("{runId}", encodeURIComponent(runId));
  return {
    label: options.label,
    dashboardUrl,
    async run(runId) {
      const res = await fetchImpl(
        `${options.apiBase.replace(/\/+$/, "")}/v1/runs/${encodeURIComponent(runId)}`,
        {
          headers: options.signingKey ? { authorization: `Bearer ${options.signingKey}` } : {},
          signal: AbortSignal.timeout(5_000),
        },
      );
      if (res.status === 404) return undefined;
      if (!res.ok) throw new Error(`${options.label} answered ${res.status} for run ${runId}`);
      const { data } = (await res.json()) as { data: RawRun };
      return {
        runId: data.run_id,
        functionId: data.function_id ?? "",
        status: data.status ?? "Unknown",
        ...optional("startedAt", data.started_at ?? data.run_started_at),
        ...optional("endedAt", data.ended_at ?? undefined),
        ...optional("error", errorText(data.error)),
        steps: (data.steps ?? []).map((step) => ({
          id: step.id,
          name: step.name ?? step.id,
          status: step.status ?? "",
          ...optional("error", errorText(step.error)),
          ...optional("completedAt", step.completed_at),
        })),
        pending: (data.pending ?? []).map((job) => ({
          name: job.name ?? job.step_id,
          kind: job.kind,
          attempt: job.attempt,
          ...optional("runAt", job.run_at),
        })),
        dashboardUrl: dashboardUrl(runId),
      };
    },
  };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
