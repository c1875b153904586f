import { ConfigError, configVariableNames, parseConfig } from "../src/config";

/**
 * Reads `docker-compose config` output, as JSON, on stdin and checks every service built from this
 * repository: each variable it sets is one src/config.ts reads, and together they form a valid
 * configuration. Compose files drift silently otherwise: a misspelt variable is just ignored.
 *
 * docker-compose --profile selfhost config | python3 -c '<yaml to json>' | npx tsx scripts/check-compose-env.ts
 */

interface ComposeFile {
  services?: Record<string, { build?: unknown; environment?: Record<string, string | number | null> }>;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function checkComposeEnvironments(compose: ComposeFile): string[] {
  const known = new Set(configVariableNames);
  const problems: string[] = [];
  const appServices = Object.entries(compose.services ?? {}).filter(
    ([, service]) => service.build !== undefined,
  );
  if (appServices.length === 0) problems.push("no service is built from this repository");

  for (const [name, service] of appServices) {
    const env = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([key, value]) => [
        key,
        value === null ? undefined : String(value),
      ]),
    );
    for (const key of Object.keys(env)) {
      if (!known.has(key)) problems.push(`${name}: ${key} is not a variable src/config.ts reads`);
    }
    try {
      parseConfig(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems.map((problem) => `${name}: ${problem}`));
    }
  }
  return problems;
}

if (require.main === module) {
  readStdin()
    .then((text) => {
      const problems = checkComposeEnvironments(JSON.parse(text) as ComposeFile);
      if (problems.length > 0) {
        process.stderr.write(
          `docker-compose.yml configures the app wrongly:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`,
        );
        process.exit(1);
      }
      process.stdout.write("docker-compose.yml: every app service's environment is a valid configuration\n");
    })
    .catch((error: unknown) => {
      process.stderr.write(`check-compose-env failed: ${String(error)}\n`);
      process.exit(1);
    });
}
