import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Starts a test's stand-in HTTP server on a free loopback port (no fixed ports in tests). `close`
 * also ends kept-alive connections, which a keep-alive client would otherwise hold open past the test.
 */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
