import { main } from "../server";
import { terminalLogDestination } from "./log-format";
import { startStandIns } from "./stand-ins";

/**
 * The development entry point (`npm start`, `npm run dev`): the production server (src/server.ts)
 * with embedded stand-ins for whatever the configuration leaves unset. The production image runs
 * dist/server.js, which is built without src/dev and so cannot start a stand-in.
 */
const logDestination = terminalLogDestination(process.stdout);
main({
  ...(logDestination ? { logDestination } : {}),
  startDevelopment: (config, logger, options) =>
    startStandIns(config, logger, { ...options, ownsProcess: true }),
});
