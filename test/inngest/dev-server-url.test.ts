import { defaultRunUrlTemplate } from "../../src/alerts/create-alerter";
import { inngestDevServerUrl, parseConfig } from "../../src/config";

/** INNGEST_DEV as the SDK reads it: `1`/`true` = dev mode at the dev server's default address. */
describe("the Inngest dev server's address", () => {
  const config = (INNGEST_DEV?: string) =>
    parseConfig({ NODE_ENV: "test", ...(INNGEST_DEV ? { INNGEST_DEV } : {}) });

  it("is the default address with INNGEST_DEV=1 or true, never Inngest Cloud", () => {
    expect(inngestDevServerUrl(config("1"))).toBe("http://localhost:8288");
    expect(inngestDevServerUrl(config("true"))).toBe("http://localhost:8288");
    expect(
      defaultRunUrlTemplate(config("1"), { localEngine: false, publicUrl: "http://localhost:3000" }),
    ).toBe("http://localhost:8288/run?runID={runId}");
  });

  it("is INNGEST_DEV itself when it is a URL", () => {
    expect(inngestDevServerUrl(config("http://127.0.0.1:8288"))).toBe("http://127.0.0.1:8288");
  });

  it("is undefined outside dev mode", () => {
    expect(inngestDevServerUrl(config())).toBeUndefined();
    expect(inngestDevServerUrl(config("0"))).toBeUndefined();
    expect(inngestDevServerUrl(config("false"))).toBeUndefined();
  });
});
