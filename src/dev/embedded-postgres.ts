import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import type { Logger } from "../logger";

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
  // PGlite is single-connection; the socket server queues clients, so the pool must stay small.
  const server = new PGLiteSocketServer({
    db,
    port: options.port ?? 0,
    host: "127.0.0.1",
    maxConnections: 100,
  });
  await server.start();
  const address = server.getServerConn();
  const url = `postgresql://postgres@${address}/postgres?sslmode=disable`;
  options.logger.info({ dir, address }, "embedded PostgreSQL (PGlite) started");
  return {
    url,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
