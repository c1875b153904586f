import { spawn } from "node:child_process";
import path from "node:path";
import request from "supertest";
import { dateIn, type ReconciliationReport } from "../../src/reconciliation";
import { childEnv } from "../support/server-process";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * A reconciliation asked for without a date is today's in the shop's time zone (the day so far),
 * from the admin API and from `npm run reconcile`. A zone 14 hours ahead of UTC shows that "today"
 * is the shop's, not the server's.
 */
const timeZone = "Pacific/Kiritimati";
const root = path.resolve(__dirname, "../..");

/** Today in the shop's zone, read around the call (the date may turn while it runs). */
const todayAround = async <T>(call: () => Promise<T>): Promise<{ result: T; days: string[] }> => {
  const before = dateIn(new Date(), timeZone);
  const result = await call();
  return { result, days: [before, dateIn(new Date(), timeZone)] };
};

describe("a reconciliation run without a date", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { SHOP_TIME_ZONE: timeZone } });
  });
  afterAll(() => h.close());

  it("POST /api/reconciliation/runs with no date reconciles today in SHOP_TIME_ZONE", async () => {
    const { result, days } = await todayAround(() =>
      request(h.appUrl)
        .post("/api/reconciliation/runs")
        .set("authorization", `Bearer ${adminToken}`)
        .send({})
        .expect(201),
    );
    const report = result.body as ReconciliationReport;
    expect(days).toContain(report.date);
    expect(report.timeZone).toBe(timeZone);
  });

  it("`npm run reconcile` with no --date reconciles today in SHOP_TIME_ZONE", async () => {
    const { result, days } = await todayAround(
      () =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, ["--import", "tsx", "src/cli/reconcile.ts"], {
            cwd: root,
            env: childEnv({
              NODE_ENV: "test",
              LOG_LEVEL: "silent",
              DATABASE_URL: h.database.url,
              STRIPE_SECRET_KEY: "sk_test_workflow",
              STRIPE_API_BASE: h.sandbox.url ?? "",
              SHOP_TIME_ZONE: timeZone,
            }),
          });
          let stdout = "";
          let stderr = "";
          child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
          child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
          child.on("exit", (code) => resolve({ code, stdout, stderr }));
        }),
    );
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const report = JSON.parse(result.stdout) as ReconciliationReport;
    expect(days).toContain(report.date);
    expect(result.stderr).toContain(`reconciled ${report.date} (${timeZone})`);
  });
});
