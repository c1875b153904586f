# syntax=docker/dockerfile:1

# The base image, pinned by version tag and by digest (the tag's multi-platform index), so that a
# rebuild gets the same Node and Debian bits. Bump both together, e.g. with
# `docker buildx imagetools inspect node:<version>-bookworm-slim`.
FROM node:20.20.2-bookworm-slim@sha256:2cf067cfed83d5ea958367df9f966191a942351a2df77d6f0193e162b5febfc0 AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

# Production dependencies only. Install scripts are skipped: nothing the runtime needs builds at
# install time, and Prisma's would try to download engines the service never runs (it talks to
# PostgreSQL through @prisma/adapter-pg).
FROM base AS prod-deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts

# Everything, to generate the Prisma client (offline: scripts/prisma-generate.js) and compile src/
# to dist/, including the migration command dist/cli/db-migrate.js.
FROM base AS build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY scripts/prisma-generate.js scripts/
COPY prisma prisma
COPY prisma.config.ts tsconfig.json tsconfig.build.json ./
COPY src src
RUN npm run build

# The development target (`docker compose` builds it): `npm start`'s entry point, src/dev/main.ts,
# with every dependency, so it starts the stand-ins the configuration leaves unset (EasyPost's
# without an EasyPost key, Stripe's without a Stripe key) beside the real dev server, Mailpit and
# `stripe listen`. Never deploy it: production runs the runtime target below.
FROM build AS development
ENV NODE_ENV=development PORT=3000 HOST=0.0.0.0 DATA_DIR=/app/.data
COPY scripts/docker-entrypoint.sh scripts/docker-entrypoint.sh
RUN mkdir -p /app/.data && chown node /app/.data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/bin/sh", "scripts/docker-entrypoint.sh"]
CMD ["node", "--import", "tsx", "src/dev/main.ts"]

FROM base AS runtime
ENV NODE_ENV=production PORT=3000
# Code and dependencies stay owned by root: the service cannot rewrite itself, and it writes no
# files (dist/ holds no src/dev stand-in, node_modules no dev dependency: nothing uses a DATA_DIR).
COPY --from=prod-deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY prisma/migrations prisma/migrations
COPY package.json ./
COPY scripts/docker-entrypoint.sh scripts/docker-entrypoint.sh
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Migrations first (when DATABASE_URL is set), then the server as PID 1.
ENTRYPOINT ["/bin/sh", "scripts/docker-entrypoint.sh"]
CMD ["node", "dist/server.js"]
