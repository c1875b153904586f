import { createHash } from "node:crypto";

/**
 * Where the tests find PostgreSQL: TEST_DATABASE_URL, which the jest global setup sets to the
 * embedded PostgreSQL it starts for the run when the variable is unset. Read when called, because
 * the global setup sets it after this module is loaded.
 */
export function adminDatabaseUrl(): string {
  // eslint-disable-next-line no-restricted-properties -- tests are configured by the environment too
  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined || url === "") {
    throw new Error(
      "TEST_DATABASE_URL is unset: run the tests through jest (its global setup starts PostgreSQL)",
    );
  }
  return url;
}

/**
 * A migrated database that every test file copies (CREATE DATABASE ... TEMPLATE). Named after the
 * checkout, so two checkouts (worktrees, CI beside a developer) sharing one server never drop each
 * other's template.
 */
export const templateDatabaseName = `order_fulfillment_test_template_${createHash("sha256")
  .update(process.cwd())
  .digest("hex")
  .slice(0, 10)}`;

export function databaseUrl(name: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The local engine's mode for the workflow and e2e suites: checkpointing (Inngest's default)
 * unless the jest project "classic" sets LOCAL_ENGINE_CHECKPOINTING=false (see jest.config.js),
 * so every workflow and e2e test runs in both modes without per-file changes.
 */
export const engineCheckpointing =
  // eslint-disable-next-line no-restricted-properties -- set per jest project
  process.env.LOCAL_ENGINE_CHECKPOINTING !== "false";
