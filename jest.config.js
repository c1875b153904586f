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
  // How long jest waits for a worker to exit at the end before killing it and printing "A worker
  // process has failed to exit gracefully". Measured with the workers instrumented: both exit
  // within 1 ms of jest's end message, with no handle left but their stdio pipes, yet the notice
  // came about once per run of test/workflow. It is jest's own race: when the parent is not
  // scheduled for 500 ms (the default) on a loaded two-core machine, libuv runs the due timer
  // before the I/O that reports the child's exit. A real leak still shows, after 5 s.
  workerGracefulExitTimeout: 5000,
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
