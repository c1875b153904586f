import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

jest.setTimeout(120_000);

/**
 * The dependency rule (.dependency-cruiser.js, run by `npm run lint`; docs/architecture.md): folders
 * never import each other in a loop, the domains never import the Inngest functions, the pages never
 * touch the database, production code never imports src/dev or test. Proven on a copy of src with
 * a planted import, so the working tree is never changed.
 */

const root = path.resolve(__dirname, "../..");
const run = promisify(execFile);
const depcruise = path.join(root, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");

async function cruise(cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [depcruise, "src", "--config", ".dependency-cruiser.js", "--output-type", "err"],
      { cwd, maxBuffer: 10 * 1024 * 1024 },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

/** A copy of what the rule reads (src, the config, tsconfig), with node_modules linked in. */
async function copyOfSources(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "dependency-rule-"));
  await cp(path.join(root, "src"), path.join(dir, "src"), { recursive: true });
  // One test file too, for the planted import of a test.
  for (const file of [".dependency-cruiser.js", "tsconfig.json", "test/support/defined.ts"])
    await cp(path.join(root, file), path.join(dir, file), { recursive: true });
  await symlink(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

describe("the dependency rule", () => {
  let copy: string;
  beforeAll(async () => {
    copy = await copyOfSources();
  });
  afterAll(() => rm(copy, { recursive: true, force: true }));

  it("holds for src as it is", async () => {
    const clean = await cruise(copy);
    expect(clean.output).toContain("no dependency violations found");
    expect(clean.code).toBe(0);
  });

  it("fails on a planted orders -> inngest/functions import, naming the loop and the layer it breaks", async () => {
    const target = path.join(copy, "src/orders/cancel-order.ts");
    const original = await readFile(target, "utf8");
    await writeFile(
      target,
      `import { fulfillOrderFunctionId } from "../inngest/functions/fulfill-order";\n${original}\n` +
        "export const plantedFunctionId = fulfillOrderFunctionId;\n",
    );
    try {
      const planted = await cruise(copy);
      expect(planted.code).not.toBe(0);
      expect(planted.output).toMatch(
        /domains-never-import-workflows: src\/orders\/cancel-order\.ts → src\/inngest\/functions\/fulfill-order\.ts/,
      );
      expect(planted.output).toMatch(/no-folder-cycles: src\/(orders|inngest)/);
    } finally {
      await writeFile(target, original);
    }
  });

  it("fails when production code imports a development stand-in or a test", async () => {
    const target = path.join(copy, "src/app.ts");
    const original = await readFile(target, "utf8");
    await writeFile(target, `import "./dev/data-dir";\nimport "../test/support/defined";\n${original}`);
    try {
      const planted = await cruise(copy);
      expect(planted.code).not.toBe(0);
      expect(planted.output).toContain("production-never-imports-dev: src/app.ts → src/dev/data-dir.ts");
      expect(planted.output).toMatch(
        /production-never-imports-tests: src\/app\.ts → test\/support\/defined\.ts/,
      );
    } finally {
      await writeFile(target, original);
    }
  });
});

/** Source files under `dir`, recursively. */
async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourcesUnder(full);
      return Promise.resolve(/\.tsx?$/.test(entry.name) ? [full] : []);
    }),
  );
  return files.flat();
}

describe("the composition root and the pages", () => {
  // A Prisma model call (db.order.findMany, tx.review.create), raw SQL, a transaction, or the pg pool.
  const databaseAccess =
    /\b(db|tx|prisma)\.(\$queryRaw|\$executeRaw|\$transaction|[a-z]\w*\.(find\w*|create\w*|update\w*|upsert|delete\w*|count|aggregate|groupBy))\b|\bsqlPool\(|\.query\(\s*[`"']/;

  it("finds the pattern it looks for", () => {
    expect(databaseAccess.test("await db.order.findUnique({ where })")).toBe(true);
    expect(databaseAccess.test("await tx.orderTimelineEntry.create({ data })")).toBe(true);
    expect(databaseAccess.test("await db.$queryRaw`SELECT 1`")).toBe(true);
    expect(databaseAccess.test("const sql = sqlPool(db);")).toBe(true);
    expect(databaseAccess.test("const orders = createOrderRepository(db);")).toBe(false);
  });

  it("src/wiring.ts composes only: it never reads or writes the database itself", async () => {
    const wiring = await readFile(path.join(root, "src/wiring.ts"), "utf8");
    expect(wiring.split("\n").filter((line) => databaseAccess.test(line))).toEqual([]);
  });

  it("no page handler reads or writes the database: they call use cases and query functions", async () => {
    const pages = await sourcesUnder(path.join(root, "src/pages"));
    expect(pages.length).toBeGreaterThan(10);
    const offending: string[] = [];
    for (const file of pages) {
      const lines = (await readFile(file, "utf8")).split("\n");
      lines.forEach((line, index) => {
        if (databaseAccess.test(line) || /\bDatabase\b/.test(line))
          offending.push(`${path.relative(root, file)}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(offending).toEqual([]);
  });
});
