// `npm run db:migrate`: the command itself is src/cli/db-migrate.ts, so the production build ships it.
import "../src/cli/db-migrate";
