import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import type { z } from "zod";
import { sqlPool, type Database } from "../db/client";
import { AppError } from "../errors";
import type { CatalogActor } from "./catalog";
import type { LowStockWatch } from "./low-stock";
import { createProductBody } from "./product-schemas";
import { recordMovement, type Queryable } from "./stock-ledger";

/**
 * Products and stock counts as CSV, for a shop moving in from a spreadsheet or another platform.
 * The columns are the export's; an import of an export changes nothing. Parsing and writing are
 * csv-parse and csv-stringify (quoting, embedded newlines and BOMs are their problem, not ours).
 *
 * An import is all or nothing: every row is checked first (line numbers in the errors), then the
 * plan is made and applied in one transaction with the products' rows locked, so what it reports
 * is what it did. A stock count is a `counted` movement to that count (the ledger records the
 * difference, under the row lock checkout takes). Raw pg: the import's one transaction holds the
 * row locks the ledger's statement needs.
 */

export const csvColumns = [
  "sku",
  "name",
  "unitPrice",
  "currency",
  "digital",
  "weightOz",
  "lengthIn",
  "widthIn",
  "heightIn",
  "lowStockThreshold",
  "stockOnHand",
  "archived",
  "shipsAlone",
  "taxCode",
] as const;
type Column = (typeof csvColumns)[number];
const requiredColumns: Column[] = ["sku", "name", "unitPrice", "currency"];
const measures = ["weightOz", "lengthIn", "widthIn", "heightIn", "lowStockThreshold"] as const;

export interface ImportLineError {
  line: number;
  field: string;
  message: string;
}

export interface ImportPlanRow {
  line: number;
  sku: string;
  action: "create" | "update" | "unchanged";
  /** Field: [now, after the import]. */
  changes: Record<string, [unknown, unknown]>;
}

export interface ImportResult {
  dryRun: boolean;
  rows: ImportPlanRow[];
  summary: { create: number; update: number; unchanged: number };
}

export interface CatalogCsv {
  exportCsv(): Promise<string>;
  importCsv(csv: string, options: { dryRun: boolean; by: CatalogActor }): Promise<ImportResult>;
}

const rowSchema = createProductBody.extend({ archived: createProductBody.shape.digital });
type Row = z.infer<typeof rowSchema> & { line: number };

interface ProductRow {
  sku: string;
  name: string;
  unit_price: number;
  currency: string;
  digital: boolean;
  weight_oz: number | null;
  length_in: number | null;
  width_in: number | null;
  height_in: number | null;
  low_stock_threshold: number | null;
  stock_on_hand: number;
  archived: boolean;
  ships_alone: boolean;
  tax_code: string | null;
}

const selectProducts = `SELECT sku, name, unit_price, trim(currency) AS currency, digital, weight_oz, length_in,
  width_in, height_in, low_stock_threshold, stock_on_hand, archived_at IS NOT NULL AS archived, ships_alone,
  tax_code FROM products`;

/**
 * CSV injection (OWASP): a spreadsheet runs a cell that starts with =, +, -, @, a tab or a carriage
 * return as a formula, so a product named "=HYPERLINK(...)" would become a link in the ops team's
 * spreadsheet. The export puts a ' before such a text cell, which spreadsheets show as text and do
 * not display; the import takes one ' off again, so an export imported back changes nothing. A cell
 * already starting with ' before such a character gets one more, so that round-trips too.
 */
const needsEscape = /^'*[=+\-@\t\r]/;
export function escapeCsvCell(text: string): string {
  return needsEscape.test(text) ? `'${text}` : text;
}
export function unescapeCsvCell(text: string): string {
  return /^'+[=+\-@\t\r]/.test(text) ? text.slice(1) : text;
}

/** A CSV cell as the JSON value the schema checks: numbers, booleans, "" as unset. */
function cellValue(column: Column, text: string): unknown {
  if (column === "digital" || column === "archived" || column === "shipsAlone") {
    if (/^(true|yes|1)$/i.test(text)) return true;
    if (/^(false|no|0|)$/i.test(text)) return false;
    return text;
  }
  if ((measures as readonly string[]).includes(column)) {
    if (text === "") return null;
    return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  }
  // An empty tax code: the shop's default (CHECKOUT_DEFAULT_TAX_CODE).
  if (column === "taxCode") return text === "" ? null : text;
  if (column === "unitPrice" || column === "stockOnHand") {
    if (text === "") return undefined;
    return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  }
  return unescapeCsvCell(text);
}

function parseRows(csv: string): Row[] {
  const errors: ImportLineError[] = [];
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parse(csv, { columns: true, bom: true, trim: true, skip_empty_lines: true, info: true });
  } catch (error) {
    const { lines } = error as { lines?: number };
    throw new AppError("validation_failed", `The CSV cannot be read: ${(error as Error).message}`, {
      details: { errors: [{ line: lines ?? 1, field: "(file)", message: (error as Error).message }] },
    });
  }
  const header = Object.keys(records[0]?.record ?? {});
  for (const column of header) {
    if (!(csvColumns as readonly string[]).includes(column))
      errors.push({
        line: 1,
        field: column,
        message: `unknown column; the columns are ${csvColumns.join(",")}`,
      });
  }
  for (const column of requiredColumns) {
    if (records.length > 0 && !header.includes(column))
      errors.push({ line: 1, field: column, message: "required column is missing" });
  }
  if (records.length === 0) errors.push({ line: 1, field: "(file)", message: "no product rows" });
  const rows: Row[] = [];
  const seen = new Map<string, number>();
  for (const { record, info } of records) {
    const line = info.lines;
    const value = Object.fromEntries(
      Object.entries(record)
        .filter(([column]) => (csvColumns as readonly string[]).includes(column))
        .map(([column, text]) => [column, cellValue(column as Column, text)])
        .filter(([, cell]) => cell !== undefined),
    );
    // SKUs are one namespace whatever their case (src/inventory/catalog.ts).
    const skuText = record.sku ?? "";
    const first = seen.get(skuText.toLowerCase());
    if (skuText !== "" && first !== undefined)
      errors.push({ line, field: "sku", message: `${skuText} is already on line ${first}` });
    if (first === undefined) seen.set(skuText.toLowerCase(), line);
    const parsed = rowSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        errors.push({ line, field: issue.path.join(".") || "(row)", message: issue.message });
      continue;
    }
    rows.push({ ...parsed.data, line });
  }
  if (errors.length > 0) {
    const shown = errors
      .slice(0, 5)
      .map((e) => `line ${e.line}, ${e.field}: ${e.message}`)
      .join("; ");
    throw new AppError("validation_failed", `Nothing was imported: ${errors.length} problem(s): ${shown}`, {
      details: { errors },
    });
  }
  return rows;
}

/** What the row would change on the product as it is now (null: a new product). */
function changesOf(row: Row, now: ProductRow | undefined): Record<string, [unknown, unknown]> {
  const wanted: Record<string, unknown> = {
    name: row.name,
    unitPrice: row.unitPrice,
    currency: row.currency.toLowerCase(),
    digital: row.digital ?? false,
    weightOz: row.weightOz ?? null,
    lengthIn: row.lengthIn ?? null,
    widthIn: row.widthIn ?? null,
    heightIn: row.heightIn ?? null,
    lowStockThreshold: row.lowStockThreshold ?? null,
    archived: row.archived ?? false,
    shipsAlone: row.shipsAlone ?? false,
    taxCode: row.taxCode ?? null,
    ...(row.stockOnHand !== undefined ? { stockOnHand: row.stockOnHand } : {}),
  };
  const current: Record<string, unknown> = now
    ? {
        name: now.name,
        unitPrice: now.unit_price,
        currency: now.currency,
        digital: now.digital,
        weightOz: now.weight_oz,
        lengthIn: now.length_in,
        widthIn: now.width_in,
        heightIn: now.height_in,
        lowStockThreshold: now.low_stock_threshold,
        archived: now.archived,
        shipsAlone: now.ships_alone,
        taxCode: now.tax_code,
        stockOnHand: now.stock_on_hand,
      }
    : {};
  return Object.fromEntries(
    Object.entries(wanted).flatMap(([field, to]) =>
      current[field] === to ? [] : [[field, [current[field] ?? null, to] as [unknown, unknown]]],
    ),
  );
}

async function apply(client: Queryable, plan: ImportPlanRow[], rows: Row[], by: CatalogActor): Promise<void> {
  for (const step of plan) {
    const row = rows.find((r) => r.line === step.line) as Row;
    const values = [
      row.sku,
      row.name,
      row.unitPrice,
      row.currency.toLowerCase(),
      row.digital ?? false,
      row.weightOz ?? null,
      row.lengthIn ?? null,
      row.widthIn ?? null,
      row.heightIn ?? null,
      row.lowStockThreshold ?? null,
      row.archived ?? false,
      row.shipsAlone ?? false,
      row.taxCode ?? null,
    ];
    if (step.action === "create") {
      await client.query(
        `INSERT INTO products (sku, name, unit_price, currency, digital, weight_oz, length_in, width_in, height_in,
           low_stock_threshold, archived_at, ships_alone, tax_code, stock_on_hand, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $11 THEN now() END, $12, $13, 0, now(), now())`,
        values,
      );
    } else if (
      step.action === "update" &&
      Object.keys(step.changes).some((field) => field !== "stockOnHand")
    ) {
      await client.query(
        `UPDATE products SET name = $2, unit_price = $3, currency = $4, digital = $5, weight_oz = $6, length_in = $7,
           width_in = $8, height_in = $9, low_stock_threshold = $10,
           archived_at = CASE WHEN $11 THEN COALESCE(archived_at, now()) END, ships_alone = $12, tax_code = $13,
           version = version + 1, updated_at = now()
         WHERE sku = $1`,
        values,
      );
    }
    if ("stockOnHand" in step.changes && row.stockOnHand !== undefined) {
      await recordMovement(client, {
        sku: row.sku,
        ...(step.action === "create" ? { delta: row.stockOnHand } : { count: row.stockOnHand }),
        reason: step.action === "create" ? "received" : "counted",
        note: `CSV import, line ${row.line}`,
        actor: by,
      });
    }
  }
}

/**
 * The catalog's rules the row checks cannot see alone (src/inventory/catalog.ts does the same for
 * the API and console): no SKU that differs only in case from another product's, no currency
 * change on a product already ordered. All problems at once, like the row checks.
 */
async function refuseBrokenRules(
  client: Queryable,
  rows: Row[],
  bySku: Map<string, ProductRow>,
): Promise<void> {
  const errors: ImportLineError[] = [];
  const { rows: caseTwins } = await client.query<{ sku: string }>(
    `SELECT sku FROM products WHERE lower(sku) = ANY($1::text[]) AND NOT sku = ANY($2::text[])`,
    [rows.map((row) => row.sku.toLowerCase()), rows.map((row) => row.sku)],
  );
  for (const row of rows) {
    const twin = caseTwins.find((product) => product.sku.toLowerCase() === row.sku.toLowerCase());
    if (twin && !bySku.has(row.sku))
      errors.push({
        line: row.line,
        field: "sku",
        message: `product ${twin.sku} exists: SKUs differing only in case are the same SKU`,
      });
  }
  const currencyChanged = rows.filter((row) => {
    const now = bySku.get(row.sku);
    return now !== undefined && now.currency !== row.currency.toLowerCase();
  });
  if (currencyChanged.length > 0) {
    const { rows: sold } = await client.query<{ sku: string }>(
      `SELECT DISTINCT sku FROM order_lines WHERE sku = ANY($1::text[])`,
      [currencyChanged.map((row) => row.sku)],
    );
    for (const row of currencyChanged) {
      if (sold.some((line) => line.sku === row.sku))
        errors.push({
          line: row.line,
          field: "currency",
          message: `${row.sku} has been ordered in ${bySku.get(row.sku)?.currency ?? "?"}; its currency cannot change`,
        });
    }
  }
  if (errors.length > 0) {
    const shown = errors
      .slice(0, 5)
      .map((e) => `line ${e.line}, ${e.field}: ${e.message}`)
      .join("; ");
    throw new AppError("validation_failed", `Nothing was imported: ${errors.length} problem(s): ${shown}`, {
      details: { errors },
    });
  }
}

export function createCatalogCsv(db: Database, deps: { lowStock: LowStockWatch }): CatalogCsv {
  const pool = sqlPool(db);
  return {
    async exportCsv() {
      const { rows } = await pool.query<ProductRow>(`${selectProducts} ORDER BY sku`);
      return stringify(
        rows.map((p) => [
          p.sku,
          p.name,
          p.unit_price,
          p.currency,
          p.digital,
          p.weight_oz ?? "",
          p.length_in ?? "",
          p.width_in ?? "",
          p.height_in ?? "",
          p.low_stock_threshold ?? "",
          p.stock_on_hand,
          p.archived,
          p.ships_alone,
          p.tax_code ?? "",
        ]),
        {
          header: true,
          columns: [...csvColumns],
          cast: {
            boolean: (value) => (value ? "true" : "false"),
            // Quoted as OWASP advises, so the ' stays part of the cell in every reader.
            string: (value) =>
              needsEscape.test(value) ? { value: escapeCsvCell(value), quoted: true } : value,
          },
        },
      );
    },

    async importCsv(csv, { dryRun, by }) {
      const rows = parseRows(csv);
      const client = await pool.connect();
      let plan: ImportPlanRow[];
      try {
        await client.query("BEGIN");
        // The rows locked in SKU order (as checkout locks them), so the plan is what gets applied.
        const { rows: current } = await client.query<ProductRow>(
          `${selectProducts} WHERE sku = ANY($1::text[]) ORDER BY sku FOR UPDATE`,
          [rows.map((row) => row.sku)],
        );
        const bySku = new Map(current.map((product) => [product.sku, product]));
        await refuseBrokenRules(client, rows, bySku);
        plan = rows.map((row) => {
          const now = bySku.get(row.sku);
          const changes = changesOf(row, now);
          const action = !now ? "create" : Object.keys(changes).length > 0 ? "update" : "unchanged";
          return { line: row.line, sku: row.sku, action, changes };
        });
        if (!dryRun) {
          // Creations would not be locked by the SELECT: sorted by SKU, like the locks.
          await apply(
            client,
            [...plan].sort((a, b) => a.sku.localeCompare(b.sku)),
            rows,
            by,
          );
        }
        await client.query(dryRun ? "ROLLBACK" : "COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        if ((error as { code?: unknown }).code === "23505")
          throw new AppError("conflict", "A product of the file was created meanwhile; run the import again");
        throw error;
      } finally {
        client.release();
      }
      if (!dryRun) await deps.lowStock.check();
      const count = (action: ImportPlanRow["action"]) => plan.filter((row) => row.action === action).length;
      return {
        dryRun,
        rows: plan,
        summary: { create: count("create"), update: count("update"), unchanged: count("unchanged") },
      };
    },
  };
}
