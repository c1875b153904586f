import { readFileSync } from "node:fs";

/**
 * Checks the Dockerfile's invariants (no Docker engine needed):
 * - every FROM names an earlier stage or an image pinned to a version tag (not `latest`, no
 *   variables); a digest (`@sha256:...`) is welcome on top;
 * - the final image runs as a non-root USER;
 * - the final image has a HEALTHCHECK (not NONE).
 * USER and HEALTHCHECK count when set in the final stage or a stage it is built FROM.
 *
 * `npx tsx scripts/check-dockerfile.ts [Dockerfile]` prints each problem and exits 1.
 */

interface Stage {
  name?: string;
  /** The stage this one is built on, when it is a stage and not an image. */
  parent?: Stage;
  user?: string;
  healthcheck?: string;
}

/** Joins continuation lines and drops comments and blank lines. */
function instructions(text: string): { keyword: string; args: string; line: number }[] {
  const result: { keyword: string; args: string; line: number }[] = [];
  let pending = "";
  let startLine = 0;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) return;
    if (pending === "") startLine = index + 1;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = "";
    const match = /^(\S+)\s*(.*)$/.exec(full);
    if (match?.[1]) result.push({ keyword: match[1].toUpperCase(), args: match[2] ?? "", line: startLine });
  });
  return result;
}

/** A reference pinned to a version: `name:tag` whose tag has a digit and is not latest. */
function imageProblem(image: string): string | undefined {
  if (image.includes("$")) return `uses a variable (${image}); pin the image literally`;
  if (image.toLowerCase() === "scratch") return undefined;
  const [reference = ""] = image.split("@");
  const lastSlash = reference.lastIndexOf("/");
  const colon = reference.indexOf(":", lastSlash + 1);
  const tag = colon === -1 ? "" : reference.slice(colon + 1);
  if (tag === "") return `${image} has no tag; pin a version tag (e.g. node:20.20.2-bookworm-slim)`;
  if (tag.toLowerCase() === "latest") return `${image} uses the tag "latest"; pin a version tag`;
  if (!/\d/.test(tag)) return `${image} has tag "${tag}", which names no version; pin a version tag`;
  return undefined;
}

export function checkDockerfile(text: string): string[] {
  const problems: string[] = [];
  const stages: Stage[] = [];

  for (const { keyword, args, line } of instructions(text)) {
    if (keyword === "FROM") {
      const words = args.split(/\s+/).filter((word) => !word.startsWith("--"));
      const image = words[0] ?? "";
      const alias = words[1]?.toUpperCase() === "AS" ? words[2] : undefined;
      const parent = stages.find((stage) => stage.name !== undefined && stage.name === image.toLowerCase());
      if (!parent) {
        const problem = imageProblem(image);
        if (problem) problems.push(`line ${line}: FROM ${problem}`);
      }
      stages.push({ name: alias?.toLowerCase(), parent });
      continue;
    }
    const current = stages.at(-1);
    if (!current) continue;
    if (keyword === "USER") current.user = args.trim();
    if (keyword === "HEALTHCHECK") current.healthcheck = args.trim();
  }

  const final = stages.at(-1);
  if (!final) return ["no FROM instruction: not a Dockerfile?"];

  const inherited = (pick: (stage: Stage) => string | undefined): string | undefined => {
    for (let stage: Stage | undefined = final; stage; stage = stage.parent) {
      const value = pick(stage);
      if (value !== undefined) return value;
    }
    return undefined;
  };

  const user = inherited((stage) => stage.user);
  if (user === undefined) {
    problems.push("the final image has no USER: it would run as root; add e.g. `USER node`");
  } else if (/^(root|0)(:.*)?$/.test(user)) {
    problems.push(`the final image runs as USER ${user}; use a non-root user such as node`);
  }

  const healthcheck = inherited((stage) => stage.healthcheck);
  if (healthcheck === undefined) {
    problems.push("the final image has no HEALTHCHECK; add one that probes /healthz");
  } else if (/^NONE$/i.test(healthcheck)) {
    problems.push("the final image disables its HEALTHCHECK (NONE); add one that probes /healthz");
  }
  return problems;
}

if (require.main === module) {
  const path = process.argv[2] ?? "Dockerfile";
  const problems = checkDockerfile(readFileSync(path, "utf8"));
  if (problems.length > 0) {
    process.stderr.write(
      `${path} breaks the image's invariants:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`${path}: pinned base image, non-root USER, HEALTHCHECK: ok\n`);
}
