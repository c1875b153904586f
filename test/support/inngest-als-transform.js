/**
 * Jest transform for one file of the Inngest SDK: components/execution/als.cjs.
 *
 * Why: the SDK finds AsyncLocalStorage with a native `await import("node:async_hooks")`. Jest runs
 * CommonJS test code in a vm context, where a native dynamic import fails without
 * --experimental-vm-modules (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG). The SDK caught that,
 * printed "node:async_hooks is not supported in this runtime. Async context is disabled." (71
 * times a suite) and ran with a no-op context: the tests exercised a path production never takes
 * (inngest.send inside a run, for one, could not see its run). Silencing the warning would have
 * kept that difference. The same module is loaded through require() instead, which jest serves,
 * so tests run the SDK with Node's AsyncLocalStorage as production does. Enabling
 * --experimental-vm-modules instead would switch all of jest to its experimental ESM loader.
 *
 * test/inngest/async-context.test.ts proves the SDK gets a real AsyncLocalStorage; if an SDK
 * upgrade changes the statement, this transform fails loudly rather than letting the fallback back.
 */
const dynamicImport = /await import\(\s*["']node:async_hooks["']\s*\)/;

module.exports = {
  process(sourceText, sourcePath) {
    if (!dynamicImport.test(sourceText)) {
      throw new Error(
        `${sourcePath}: the Inngest SDK no longer loads node:async_hooks with a dynamic import; revisit test/support/inngest-als-transform.js`,
      );
    }
    return { code: sourceText.replace(dynamicImport, 'require("node:async_hooks")') };
  },
};
