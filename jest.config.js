/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.tsx?$": ["ts-jest", { tsconfig: "tsconfig.test.json" }] },
  globalSetup: "<rootDir>/test/support/global-setup.ts",
  testTimeout: 30000,
  // Each test file gets its own database, so files can run in parallel on the two cores.
  maxWorkers: 2,
};
