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
  // Listening on every interface (HOST=0.0.0.0 in a container): the URL names loopback, which
  // reaches it from inside, and from the machine through a port published on 127.0.0.1.
  const named = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return { server, url: `http://${named.includes(":") ? `[${named}]` : named}:${address.port}` };
}
