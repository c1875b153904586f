#!/usr/bin/env node
// npm run test:races -- --runs 200 [--seed 42] [--path "3:1"]: the property-based race suite
// (test/races) with more runs than CI's default; the seed and path replay a reported failure.
const { spawnSync } = require("node:child_process");

const args = process.argv.slice(2);
const env = { ...process.env };
for (let i = 0; i < args.length; i++) {
  const [flag, value] = [args[i], args[i + 1]];
  if (flag === "--runs") env.RACE_RUNS = value;
  else if (flag === "--seed") env.RACE_SEED = value;
  else if (flag === "--path") env.RACE_PATH = value;
  else {
    console.error(`unknown option ${flag}: use --runs <n>, --seed <n>, --path <p>`);
    process.exit(2);
  }
  i++;
}
const result = spawnSync("npx", ["jest", "test/races", "--selectProjects", "checkpointing"], {
  stdio: "inherit",
  env,
});
process.exit(result.status ?? 1);
