// `npm run reconcile -- --date YYYY-MM-DD`: the command is src/cli/reconcile.ts, so the production build ships it.
import "../src/cli/reconcile";
