/**
 * The Inngest SDK's async context (AsyncLocalStorage) loaded as production loads it: see
 * test/support/inngest-als-transform.js for why jest needs this one file rewritten.
 */
const inngestAsyncContext = {
  "inngest/components/execution/als\\.cjs$": "<rootDir>/test/support/inngest-als-transform.js",
};

/** @type {import('jest').Config} */
const base = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.tsx?$": ["ts-jest", { tsconfig: "tsconfig.test.json" }], ...inngestAsyncContext },
  // node_modules are not transformed, except the one SDK file above.
  transformIgnorePatterns: ["/node_modules/(?!inngest/components/execution/als\\.cjs$)"],
};

module.exports = {
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  globalTeardown: "<rootDir>/test/support/global-teardown.ts",
  testTimeout: 30000,
  // Each test file gets its own database, so files can run in parallel on the two cores.
  maxWorkers: 2,
  // The workflow and e2e suites run twice: with the local engine checkpointing (Inngest's
  // default) and classic (what the SDK falls back to); see test/support/env.ts.
  projects: [
    { ...base, displayName: "checkpointing" },
    {
      ...base,
      displayName: "classic",
      roots: ["<rootDir>/test/workflow", "<rootDir>/test/e2e"],
      setupFiles: ["<rootDir>/test/support/classic-engine-mode.ts"],
    },
  ],
};
