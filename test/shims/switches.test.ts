import express from "express";
import pino from "pino";
import {
  BufferedResponse,
  answerBeforeExpress,
  responseOfBytes,
  skipRedactionWalkForPrimitives,
  switchShimsOffForMeasurement,
} from "../../src/shims";

/** What bench:shims measures against: with a shim off, the library's own path, nothing patched. */
describe("a shim switched off for a measurement", () => {
  const bytes = new Uint8Array(Buffer.from('{"ok":true}')) as Uint8Array<ArrayBuffer>;
  const logger = () => pino({ redact: { paths: ["*.secret"] } }, pino.destination("/dev/null"));

  it("is installed while on", () => {
    expect(answerBeforeExpress(express(), { method: "POST", url: "/x", serve: () => undefined })).toBe(true);
    expect(responseOfBytes(bytes, { status: 200 })).toBeInstanceOf(BufferedResponse);
    expect(skipRedactionWalkForPrimitives(logger())).toBe(true);
  });

  it("leaves the library's own behaviour once off", async () => {
    switchShimsOffForMeasurement(["express-entry", "buffered-response", "pino-redaction-primitives"]);
    const app = express();
    const handle = (app as unknown as { handle: unknown }).handle;
    expect(answerBeforeExpress(app, { method: "POST", url: "/x", serve: () => undefined })).toBe(false);
    expect((app as unknown as { handle: unknown }).handle).toBe(handle);
    const response = responseOfBytes(bytes, { status: 200 });
    expect(response).not.toBeInstanceOf(BufferedResponse);
    expect(await response.json()).toEqual({ ok: true });
    expect(skipRedactionWalkForPrimitives(logger())).toBe(false);
  });
});
