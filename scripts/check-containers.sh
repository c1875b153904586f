#!/usr/bin/env bash
# Validates the container setup without a Docker engine: docker-compose.yml through Debian's
# docker-compose (installed when missing), the app services' environment against src/config.ts,
# the Dockerfile's invariants, and that each app service's command starts with its environment.
# Needs node_modules (npm ci) for the TypeScript checks.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v docker-compose >/dev/null 2>&1; then
  echo "docker-compose is missing; installing Debian's package to validate docker-compose.yml"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo -n"; fi
  export DEBIAN_FRONTEND=noninteractive
  # The package lists may be missing or stale: update only when the first attempt fails.
  if ! $sudo apt-get install -y -qq docker-compose >/dev/null 2>&1; then
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq docker-compose >/dev/null
  fi
fi

docker-compose -f docker-compose.yml config -q
docker-compose -f docker-compose.yml --profile selfhost config -q
echo "docker-compose.yml: valid (default and selfhost profiles)"

docker-compose -f docker-compose.yml --profile selfhost config \
  | python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)' \
  | npx tsx scripts/check-compose-env.ts

npx tsx scripts/check-dockerfile.ts Dockerfile

# Every app service starts: its command, with its compose environment, until /readyz answers 200
# (scripts/check-compose-start.ts). Offline: only loopback, inside a network namespace when root.
compose_json="$(docker-compose -f docker-compose.yml --profile selfhost config \
  | python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)')"
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1; then
  printf '%s' "$compose_json" | unshare -n bash -c 'ip link set lo up && npx tsx scripts/check-compose-start.ts'
else
  printf '%s' "$compose_json" | npx tsx scripts/check-compose-start.ts
fi
