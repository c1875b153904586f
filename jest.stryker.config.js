/**
 * Jest as StrykerJS runs it (npm run test:mutation): the regular config, limited to the test files
 * that exercise the mutated modules, and without ts-jest's type check (a mutant need not type-check
 * to be killed; tsc covers types). STRYKER_TESTS narrows the files further (comma-separated).
 */
const base = require("./jest.config");

const tests = (process.env.STRYKER_TESTS ?? "").split(",").filter(Boolean);

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.test.json", diagnostics: false }],
  },
  ...(tests.length > 0 ? { testMatch: tests.map((file) => `<rootDir>/${file}`) } : {}),
};
