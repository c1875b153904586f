import { AsyncLocalStorage } from "node:async_hooks";
import path from "node:path";

/**
 * The Inngest SDK runs in the tests with Node's AsyncLocalStorage, as in production, not with its
 * no-op fallback (test/support/inngest-als-transform.js says why jest needed help).
 */
interface SdkAsyncContext {
  getAsyncLocalStorage(): Promise<unknown>;
  isALSFallback(): boolean | undefined;
  runWithAsyncCtx<T>(store: unknown, fn: () => T): T;
  getAsyncCtxSync(): unknown;
}

// The module the SDK itself requires (same file, so the same instance in jest's registry).
const alsModule = path.join(path.dirname(require.resolve("inngest")), "components/execution/als.cjs");

describe("the Inngest SDK's async context in tests", () => {
  it("is a real AsyncLocalStorage that carries a store through awaits", async () => {
    const warn = jest.spyOn(console, "warn");
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the SDK's own CommonJS module, by path
    const als = require(alsModule) as SdkAsyncContext;
    expect(await als.getAsyncLocalStorage()).toBeInstanceOf(AsyncLocalStorage);
    expect(als.isALSFallback()).toBe(false);
    const seen = await als.runWithAsyncCtx({ marker: "run-1" }, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return als.getAsyncCtxSync();
    });
    expect(seen).toEqual({ marker: "run-1" });
    expect(warn).not.toHaveBeenCalledWith(expect.stringContaining("node:async_hooks"));
    warn.mockRestore();
  });
});
