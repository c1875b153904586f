#!/bin/sh
# The container's entry point: apply pending migrations, then become the server (exec, so that it
# is PID 1 and receives SIGTERM for its graceful shutdown). Without DATABASE_URL there is nothing
# to migrate here: the server starts, and migrates, its embedded database itself (development only).
set -eu
if [ -n "${DATABASE_URL:-}" ]; then
  node dist/cli/db-migrate.js
fi
exec "$@"
