#!/usr/bin/env node
// Runs `prisma generate` offline. The CLI insists on locating its schema engine even though
// generating the client never runs it, and the engine cannot be downloaded everywhere we build;
// pointing PRISMA_SCHEMA_ENGINE_BINARY at any existing file satisfies that check.
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || __filename,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
};
const prisma = path.join(__dirname, "..", "node_modules", "prisma", "build", "index.js");
const result = spawnSync(process.execPath, [prisma, "generate"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
