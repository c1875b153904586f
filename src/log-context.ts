import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Fields that every log line written while handling one piece of work should carry (a workflow
 * step's order id and run id), without passing a child logger through every repository and
 * adapter. src/logger.ts mixes the current fields into each line.
 */
export interface LogContext {
  orderId?: string;
  runId?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

export function withLogContext<T>(context: LogContext, work: () => T): T {
  return storage.run({ ...storage.getStore(), ...context }, work);
}

export function currentLogContext(): LogContext | undefined {
  return storage.getStore();
}
