import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { checkComposeEnvironments } from "../../scripts/check-compose-env";
import { checkDockerfile } from "../../scripts/check-dockerfile";

const root = path.resolve(__dirname, "../..");
const tsx = path.join(root, "node_modules", ".bin", "tsx");

const good = `# syntax=docker/dockerfile:1
FROM node:20.20.2-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0 AS base
WORKDIR /app

FROM base AS build
RUN npm ci

FROM base
COPY --from=build /app/dist dist
USER node
HEALTHCHECK --interval=15s \\
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/healthz')"]
CMD ["node", "dist/server.js"]
`;

describe("scripts/check-dockerfile.ts", () => {
  it("accepts the repository's Dockerfile", async () => {
    expect(checkDockerfile(await readFile(path.join(root, "Dockerfile"), "utf8"))).toEqual([]);
  });

  it("accepts a pinned multi-stage file whose final stage sets USER and HEALTHCHECK", () => {
    expect(checkDockerfile(good)).toEqual([]);
  });

  it("accepts USER and HEALTHCHECK set in the stage the final one is built from", () => {
    const inherited = `FROM node:20.20.2-bookworm-slim AS runtime-base
USER node
HEALTHCHECK CMD ["true"]
FROM runtime-base
CMD ["node", "dist/server.js"]
`;
    expect(checkDockerfile(inherited)).toEqual([]);
  });

  it("refuses a file without USER", () => {
    expect(checkDockerfile(good.replace("USER node\n", ""))).toEqual([
      expect.stringContaining("no USER: it would run as root"),
    ]);
  });

  it("refuses USER root, also by uid", () => {
    expect(checkDockerfile(good.replace("USER node", "USER root"))).toEqual([
      expect.stringContaining("runs as USER root"),
    ]);
    expect(checkDockerfile(good.replace("USER node", "USER 0:0"))).toEqual([
      expect.stringContaining("runs as USER 0:0"),
    ]);
  });

  it("refuses a file without HEALTHCHECK, or with HEALTHCHECK NONE", () => {
    const without = good.replace(/HEALTHCHECK[^\n]*\\\n[^\n]*\n/, "");
    expect(checkDockerfile(without)).toEqual([expect.stringContaining("no HEALTHCHECK")]);
    const disabled = good.replace(/HEALTHCHECK[^\n]*\\\n[^\n]*\n/, "HEALTHCHECK NONE\n");
    expect(checkDockerfile(disabled)).toEqual([expect.stringContaining("disables its HEALTHCHECK")]);
  });

  it.each([
    ["node", "has no tag"],
    ["node:latest", 'uses the tag "latest"'],
    ["node:lts-slim", "names no version"],
    ["${NODE_IMAGE}", "uses a variable"],
    ["registry.example:5000/node", "has no tag"],
  ])("refuses FROM %s", (image, problem) => {
    const problems = checkDockerfile(good.replace(/^FROM node:\S+ AS base$/m, `FROM ${image} AS base`));
    expect(problems).toEqual([expect.stringContaining(problem)]);
    expect(problems[0]).toMatch(/^line 2: FROM /);
  });

  it("exits non-zero with a readable message when run on a bad file", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "dockerfile-check-"));
    try {
      const file = path.join(dir, "Dockerfile");
      await writeFile(file, 'FROM node:latest\nCMD ["node", "server.js"]\n');
      const run = promisify(execFile)(tsx, ["scripts/check-dockerfile.ts", file], { cwd: root });
      await expect(run).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringMatching(
          /breaks the image's invariants:\n {2}- line 1: FROM node:latest uses the tag "latest"/,
        ),
      });
      await expect(run).rejects.toMatchObject({ stderr: expect.stringContaining("no USER") });
      await expect(run).rejects.toMatchObject({ stderr: expect.stringContaining("no HEALTHCHECK") });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("scripts/check-compose-env.ts", () => {
  const app = (environment: Record<string, string>) => ({
    services: { db: { environment: { POSTGRES_DB: "shop" } }, app: { build: { context: "." }, environment } },
  });

  it("accepts services whose variables form a valid configuration, ignoring other images", () => {
    expect(
      checkComposeEnvironments(app({ NODE_ENV: "development", INNGEST_DEV: "http://inngest:8288" })),
    ).toEqual([]);
  });

  it("names variables src/config.ts does not read and values it refuses", () => {
    expect(checkComposeEnvironments(app({ INNGEST_DEVV: "1", PORT: "abc" }))).toEqual([
      "app: INNGEST_DEVV is not a variable src/config.ts reads",
      expect.stringMatching(/^app: PORT: /),
    ]);
  });

  it("holds production services to the production rules", () => {
    expect(checkComposeEnvironments(app({ NODE_ENV: "production" }))).toEqual(
      expect.arrayContaining(["app: DATABASE_URL: required when NODE_ENV=production"]),
    );
  });
});
