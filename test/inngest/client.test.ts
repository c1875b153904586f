import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { Inngest } from "inngest";
import { parseConfig } from "../../src/config";
import { createInngestClient } from "../../src/inngest/client";
import { listenOnLoopback } from "../support/loopback-server";

/** Inngest's event API, recording each request's headers and events. */
async function startEventApi() {
  const requests: { headers: IncomingHttpHeaders; events: { name: string; id?: string }[] }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const events = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { name: string; id?: string }[];
      requests.push({ headers: req.headers, events });
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ ids: events.map((e) => e.id ?? "x"), status: 200 }));
    });
  });
  return { ...(await listenOnLoopback(server)), requests };
}

/** What identifies the SDK and environment; the seed header differs per send by design. */
const sdkHeaders = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(
    Object.entries(headers).filter(
      ([name]) => name.startsWith("x-inngest-") && name !== "x-inngest-event-id-seed",
    ),
  );

describe("the Inngest client (cheaper event sends)", () => {
  let eventApi: Awaited<ReturnType<typeof startEventApi>>;
  beforeAll(async () => {
    eventApi = await startEventApi();
  });
  afterAll(() => eventApi.close());

  it("sends events with the headers the SDK's own client sends, on every send", async () => {
    const ours = createInngestClient(parseConfig({ NODE_ENV: "test" }), { localEngineUrl: eventApi.url });
    const plain = new Inngest({ id: "shop", isDev: true, baseUrl: eventApi.url, eventKey: "local" });
    await plain.send({ name: "test/probe", id: "probe-plain", data: {} });
    await ours.send({ name: "test/probe", id: "probe-1", data: {} });
    await ours.send({ name: "test/probe", id: "probe-2", data: {} });

    const [fromPlain, first, second] = eventApi.requests.slice(-3);
    expect(first?.events).toEqual([expect.objectContaining({ name: "test/probe", id: "probe-1" })]);
    expect(second?.events).toEqual([expect.objectContaining({ name: "test/probe", id: "probe-2" })]);
    expect(sdkHeaders(first?.headers ?? {})).toEqual(sdkHeaders(fromPlain?.headers ?? {}));
    expect(sdkHeaders(second?.headers ?? {})).toEqual(sdkHeaders(fromPlain?.headers ?? {}));
    expect(first?.headers["user-agent"]).toBe(fromPlain?.headers["user-agent"]);
    expect(sdkHeaders(first?.headers ?? {})["x-inngest-sdk"]).toMatch(/^inngest-js:v4\./);
  });

  it("computes its headers again when its environment changes", async () => {
    const ours = createInngestClient(parseConfig({ NODE_ENV: "test" }), { localEngineUrl: eventApi.url });
    await ours.send({ name: "test/probe", id: "probe-3", data: {} });
    expect(eventApi.requests.at(-1)?.headers["x-inngest-env"]).toBeUndefined();
    ours.setEnvVars({ INNGEST_ENV: "branch-42" });
    await ours.send({ name: "test/probe", id: "probe-4", data: {} });
    expect(eventApi.requests.at(-1)?.headers["x-inngest-env"]).toBe("branch-42");
  });
});
