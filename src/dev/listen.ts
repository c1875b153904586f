import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";

/** Starts a stand-in's Express app on `port` (0: a free one) and gives its base URL. */
export async function listenOn(
  app: Express,
  port: number,
  host: string,
): Promise<{ server: Server; url: string }> {
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  const address = server.address() as AddressInfo;
  return { server, url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}` };
}
