import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { shims } from "../../src/shims";

const root = path.resolve(__dirname, "../..");

/** The version in use: the platform's undici for `node:undici`, the installed package otherwise. */
function installedVersion(library: string): string {
  if (library === "node:undici") return process.versions.undici ?? "none";
  const manifest = path.join(root, "node_modules", library, "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

describe("each shim is pinned to the library version it patches", () => {
  it.each(shims.map((shim) => [shim.name, shim] as const))("%s", (_name, shim) => {
    const installed = installedVersion(shim.library);
    if (installed !== shim.version) {
      throw new Error(
        `${shim.library} is ${installed}, but ${shim.file} patches ${shim.reachesInto} as ${shim.version} has it. ` +
          `Read the library's change for that code, run ${shim.test} and \`npm run bench:shims\`, ` +
          `then set the version in src/shims/index.ts (or drop the shim if it no longer buys 5 %).`,
      );
    }
    expect(installed).toBe(shim.version);
  });

  it("lists every patch in src/shims, each with its test and a measured gain", () => {
    const patchFiles = readdirSync(path.join(root, "src/shims"))
      .filter((file) => file !== "index.ts" && file !== "switches.ts")
      .map((file) => `src/shims/${file}`)
      .sort();
    expect(shims.map((shim) => shim.file).sort()).toEqual(patchFiles);
    for (const shim of shims) {
      expect(existsSync(path.join(root, shim.test))).toBe(true);
      expect(shim.measuredGain).toMatch(/\d %/);
    }
  });
});
