import net from "node:net";
import type { PGlite } from "@electric-sql/pglite";

/**
 * Serves one PGlite database to many PostgreSQL clients over TCP.
 *
 * PGlite has a single session, so clients must take turns, and at the right grain: an extended-
 * protocol query is several messages (Parse, Bind, Execute, Sync) and two clients' messages must
 * never interleave, or one client's Bind lands on the other's unnamed statement ("bind message
 * supplies 6 parameters, but prepared statement requires 2"). @electric-sql/pglite-socket takes
 * turns per message; this server takes turns per batch (everything up to a Sync or a simple
 * Query), and while a client is inside a transaction only that client runs.
 */

const sslRequestCode = 80877103;
const cancelRequestCode = 80877102;
const protocolVersion3 = 196608;

interface Batch {
  connection: Connection;
  messages: Uint8Array[];
}

class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Uint8Array[] = [];
  private started = false;
  closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly submit: (batch: Batch) => void,
  ) {}

  receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return;
        const length = this.buffer.readInt32BE(0);
        const code = this.buffer.readInt32BE(4);
        if (this.buffer.length < length) return;
        const message = this.buffer.subarray(0, length);
        this.buffer = this.buffer.subarray(length);
        if (code === sslRequestCode) {
          this.socket.write("N");
          continue;
        }
        if (code === cancelRequestCode) continue;
        if (code === protocolVersion3) this.started = true;
        this.submit({ connection: this, messages: [new Uint8Array(message)] });
        continue;
      }
      if (this.buffer.length < 5) return;
      const type = String.fromCharCode(this.buffer[0] ?? 0);
      const total = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < total) return;
      const message = new Uint8Array(this.buffer.subarray(0, total));
      this.buffer = this.buffer.subarray(total);
      if (type === "X") {
        this.socket.end();
        return;
      }
      this.pending.push(message);
      // Sync ends an extended-protocol batch, Query is a batch of its own; Flush asks for output now.
      if (type === "S" || type === "Q" || type === "H") {
        this.submit({ connection: this, messages: this.pending });
        this.pending = [];
      }
    }
  }
}

export interface PgliteServer {
  /** host:port */
  address: string;
  stop(): Promise<void>;
}

export async function servePglite(
  db: PGlite,
  options: { port?: number; host?: string } = {},
): Promise<PgliteServer> {
  const queue: Batch[] = [];
  const connections = new Set<Connection>();
  let transactionOwner: Connection | undefined;
  let running = false;

  const nextBatch = (): Batch | undefined => {
    const index = transactionOwner ? queue.findIndex((b) => b.connection === transactionOwner) : 0;
    return index >= 0 ? queue.splice(index, 1)[0] : undefined;
  };

  const drain = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      for (let batch = nextBatch(); batch; batch = nextBatch()) {
        const { connection, messages } = batch;
        if (connection.closed) continue;
        await db.runExclusive(async () => {
          for (const message of messages) {
            await db.execProtocolRawStream(message, {
              onRawData: (data) => {
                if (!connection.closed) connection.socket.write(data);
              },
            });
          }
        });
        transactionOwner = db.isInTransaction() ? connection : undefined;
      }
    } finally {
      running = false;
    }
  };

  const submit = (batch: Batch): void => {
    queue.push(batch);
    void drain();
  };

  const release = async (connection: Connection): Promise<void> => {
    connection.closed = true;
    connections.delete(connection);
    if (transactionOwner === connection) {
      // A client that vanished mid-transaction must not block everyone else forever.
      await db.runExclusive(() => db.exec("ROLLBACK"));
      transactionOwner = undefined;
      void drain();
    }
  };

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    const connection = new Connection(socket, submit);
    connections.add(connection);
    socket.on("data", (chunk: Buffer) => connection.receive(chunk));
    socket.on("close", () => void release(connection));
    socket.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as net.AddressInfo;
  return {
    address: `${address}:${port}`,
    async stop() {
      for (const connection of connections) connection.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
