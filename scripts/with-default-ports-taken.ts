import { spawn } from "node:child_process";
import net from "node:net";

/**
 * Runs a command while the service's default ports (PORT 3000, STRIPE_SANDBOX_PORT 12111,
 * EASYPOST_SANDBOX_PORT 12112, LOCAL_ENGINE_PORT 8288) are held by another listener, as on a
 * developer's machine where another project runs: proves that the suite asks for port 0 wherever
 * it starts something, and never needs a default free.
 *
 *   npm run test:ports-taken -- test/process test/ops/log-lines.test.ts
 *   npx tsx scripts/with-default-ports-taken.ts npx jest <files>
 *
 * A port some other program already holds is left to it: it is taken either way.
 */
const defaultPorts = [3000, 12111, 12112, 8288];

async function hold(port: number): Promise<net.Server | undefined> {
  const server = net.createServer((socket) => socket.destroy());
  return new Promise((resolve) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EADDRINUSE") throw error;
      console.error(`port ${port}: already taken by another program`);
      resolve(undefined);
    });
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve(server));
  });
}

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined) throw new Error("usage: with-default-ports-taken.ts <command> [args...]");
  const held = (await Promise.all(defaultPorts.map(hold))).filter(
    (server): server is net.Server => server !== undefined,
  );
  console.error(
    `holding ${defaultPorts.join(", ")} on 127.0.0.1 while running: ${command} ${args.join(" ")}`,
  );
  const child = spawn(command, args, { stdio: "inherit" });
  const code = await new Promise<number>((resolve) => child.on("exit", (exit) => resolve(exit ?? 1)));
  for (const server of held) server.close();
  process.exit(code);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
