import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { Logger } from "../logger";
import { servePglite } from "./pglite-server";

/**
 * PGlite (PostgreSQL compiled to WebAssembly) served over the PostgreSQL wire protocol on a
 * loopback port, so the service talks to it through the same Prisma client and SQL as to a
 * real server. For development and CI only: config refuses it in production.
 */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  logger: Logger;
}): Promise<EmbeddedPostgres> {
  const dir = path.resolve(options.dataDir, "pglite");
  await mkdir(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = await servePglite(db, { port: options.port ?? 0 });
  const url = `postgresql://postgres@${server.address}/postgres?sslmode=disable`;
  options.logger.info({ dir, address: server.address }, "embedded PostgreSQL (PGlite) started");
  return {
    url,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
