/**
 * Jest as StrykerJS runs it (npm run test:mutation): the regular config's first project (the
 * checkpointing one; the classic project only re-runs the workflow/e2e suites), flattened to a single
 * project so that testMatch below applies (with `projects`, a top-level testMatch is ignored and the
 * whole suite would run), keeping the global setup (embedded PostgreSQL, template database), and
 * without ts-jest's type check (a mutant need not type-check to be killed; tsc covers types).
 * STRYKER_TESTS names the test files (comma-separated).
 */
const { projects, ...shared } = require("./jest.config");

const tests = (process.env.STRYKER_TESTS ?? "").split(",").filter(Boolean);
const project = { ...projects[0] };
delete project.displayName;

// STRYKER_NO_DATABASE=1: the group's tests use in-memory fakes only (test/workflow-fast,
// test/orders/intake/*.unit.test.ts), so the
// embedded PostgreSQL of the global setup, seconds per Stryker test run, is left out.
const withoutDatabase = process.env.STRYKER_NO_DATABASE === "1";
const base = { ...shared };
if (withoutDatabase) {
  delete base.globalSetup;
  delete base.globalTeardown;
}

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  ...project,
  transform: {
    // The regular config's other transforms (the Inngest SDK's async context) stay.
    ...project.transform,
    "^.+\\.tsx?$": ["ts-jest", { tsconfig: "tsconfig.test.json", diagnostics: false }],
  },
  ...(tests.length > 0 ? { testMatch: tests.map((file) => `<rootDir>/${file}`) } : {}),
};
