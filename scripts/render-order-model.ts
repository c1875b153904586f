/**
 * Writes the order model's tables (src/shared/order-model.ts) into docs/order-model.md between
 * its markers; test/orders/order-model.test.ts fails while the file is not current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderOrderModel } from "../src/shared/order-model";

const file = path.join(__dirname, "../docs/order-model.md");
const start = "<!-- order-model:start -->\n";
const end = "<!-- order-model:end -->";
const doc = readFileSync(file, "utf8");
const from = doc.indexOf(start);
const to = doc.indexOf(end);
if (from < 0 || to < 0) throw new Error(`${file}: the order-model markers are missing`);
writeFileSync(file, `${doc.slice(0, from + start.length)}${renderOrderModel()}${doc.slice(to)}`);
console.log(`${file} rendered`);
