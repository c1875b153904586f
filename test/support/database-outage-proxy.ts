import net from "node:net";

/**
 * A TCP proxy in front of PostgreSQL that a test can take away and bring back, as a database
 * restart or a network blip does: `cut()` drops every open connection and refuses new ones
 * (accepted, then closed at once), `restore()` lets connections through again.
 */
export interface DatabaseOutageProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startDatabaseOutageProxy(databaseUrl: string): Promise<DatabaseOutageProxy> {
  const target = new URL(databaseUrl);
  const open = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      down = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
