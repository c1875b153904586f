/**
 * The dependency rule (docs/architecture.md), checked by `npm run lint`: dependencies point one
 * way, from the doors (HTTP, pages, Inngest functions) through the domains down to the shared
 * modules below them (events, timeline, db, errors), never back up and never in a loop, and
 * production code never reaches into development stand-ins or tests.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const domains = "(orders|inventory|payments|shipping|notifications|recovery|alerts|metrics|health|webhooks)";
const below = "(events|timeline|db|shared|generated)";

module.exports = {
  forbidden: [
    {
      name: "no-folder-cycles",
      severity: "error",
      comment:
        "Two folders that import each other are one tangled module: move what both need into a module below them (src/events, src/timeline, src/db).",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-module-cycles",
      severity: "error",
      comment: "Modules that import each other, directly or through others.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "domains-never-import-workflows",
      severity: "error",
      comment:
        "The domains are called by the Inngest functions and steps, never the other way: event contracts live in src/events, shared constants in the domain that owns them.",
      from: { path: `^src/${domains}/` },
      to: { path: "^src/inngest/" },
    },
    {
      name: "shared-modules-stay-below",
      severity: "error",
      comment:
        "src/events, src/timeline, src/db and src/shared sit below every domain: they import none of them (nor the doors above).",
      from: { path: `^src/${below}/` },
      to: { path: `^src/(${domains.slice(1, -1)}|inngest|pages|http|wiring|app|server)` },
    },
    {
      name: "pages-never-touch-the-database",
      severity: "error",
      comment:
        "Page handlers render and call use cases and query functions of the domain folders; the database is theirs.",
      from: { path: "^src/pages/" },
      to: { path: "^src/(db/|generated/prisma/client)" },
    },
    {
      name: "production-never-imports-dev",
      severity: "error",
      comment: "src/dev holds development stand-ins, left out of the build (tsconfig.build.json).",
      from: { path: "^src/", pathNot: "^src/dev/" },
      to: { path: "^src/dev/" },
    },
    {
      name: "production-never-imports-tests",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^test/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/generated/prisma/(internal|models)/" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".json"] },
  },
};
