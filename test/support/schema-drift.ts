import { getDMMF } from "@prisma/internals";
import { Client } from "pg";

/**
 * Describes a schema as comparable lines (tables, columns with type and nullability, unique keys,
 * indexes, foreign keys), once from Prisma's datamodel and once from a migrated database, so a
 * test can diff the two.
 */

type DmmfDocument = Awaited<ReturnType<typeof getDMMF>>;
type DmmfModel = DmmfDocument["datamodel"]["models"][number];
type DmmfField = DmmfModel["fields"][number];

/** A Prisma list (`String[]`) is a PostgreSQL array of its element type. */
function pgType(field: DmmfField, enumDbNames: Map<string, string>): string {
  return `${elementPgType(field, enumDbNames)}${field.isList ? "[]" : ""}`;
}

function elementPgType(field: DmmfField, enumDbNames: Map<string, string>): string {
  if (field.kind === "enum") return enumDbNames.get(field.type) ?? field.type;
  const [nativeName, nativeArgs] = (field.nativeType as [string, string[]] | null | undefined) ?? [null, []];
  const args = nativeArgs.length > 0 ? `(${nativeArgs.join(",")})` : "";
  switch (nativeName) {
    case "Uuid":
      return "uuid";
    case "Char":
      return `character${args}`;
    case "VarChar":
      return `character varying${args}`;
    case "Timestamptz":
      return `timestamp${args || "(6)"} with time zone`;
    case "Timestamp":
      return `timestamp${args || "(6)"} without time zone`;
    case null:
      break;
    default:
      throw new Error(`schema-drift: no mapping for native type @db.${nativeName}`);
  }
  const defaults: Record<string, string> = {
    String: "text",
    Int: "integer",
    BigInt: "bigint",
    Boolean: "boolean",
    Float: "double precision",
    Decimal: "numeric(65,30)",
    DateTime: "timestamp(3) without time zone",
    Json: "jsonb",
    Bytes: "bytea",
  };
  const mapped = defaults[field.type];
  if (!mapped) throw new Error(`schema-drift: no mapping for Prisma type ${field.type}`);
  return mapped;
}

export async function describePrismaSchema(datamodel: string): Promise<string[]> {
  const dmmf = await getDMMF({ datamodel });
  const models = dmmf.datamodel.models;
  const enumDbNames = new Map(dmmf.datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const tableOf = new Map(models.map((m) => [m.name, m.dbName ?? m.name]));
  const columnOf = (model: string, field: string): string => {
    const f = models.find((m) => m.name === model)?.fields.find((x) => x.name === field);
    if (!f) throw new Error(`schema-drift: unknown field ${model}.${field}`);
    return f.dbName ?? f.name;
  };

  const lines: string[] = [];
  for (const model of models) {
    const table = tableOf.get(model.name) ?? model.name;
    lines.push(`table ${table}`);
    for (const field of model.fields) {
      if (field.kind === "object") {
        const from = field.relationFromFields ?? [];
        if (from.length > 0) {
          const target = tableOf.get(field.type) ?? field.type;
          const cols = from.map((f) => columnOf(model.name, f)).join(",");
          const refs = (field.relationToFields ?? []).map((f) => columnOf(field.type, f)).join(",");
          lines.push(`foreign key ${table}(${cols}) -> ${target}(${refs})`);
        }
        continue;
      }
      const nullability = field.isRequired ? "not null" : "null";
      lines.push(
        `column ${table}.${field.dbName ?? field.name} ${pgType(field, enumDbNames)} ${nullability}`,
      );
    }
  }
  for (const index of dmmf.datamodel.indexes) {
    const table = tableOf.get(index.model) ?? index.model;
    const cols = index.fields.map((f) => columnOf(index.model, f.name)).join(",");
    const kind = index.type === "id" ? "primary key" : index.type === "unique" ? "unique" : "index";
    lines.push(`${kind} ${table}(${cols})`);
  }
  return lines.sort();
}

export async function describeDatabase(url: string, schema = "public"): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const lines: string[] = [];
    const tables = await client.query<{ table: string }>(
      `SELECT c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> '_prisma_migrations'`,
      [schema],
    );
    for (const { table } of tables.rows) lines.push(`table ${table}`);

    const columns = await client.query<{ table: string; column: string; type: string; notnull: boolean }>(
      `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
              a.attnotnull AS notnull
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> '_prisma_migrations'
         AND a.attnum > 0 AND NOT a.attisdropped`,
      [schema],
    );
    for (const c of columns.rows) {
      lines.push(
        `column ${c.table}.${c.column} ${c.type.replace(/"/g, "")} ${c.notnull ? "not null" : "null"}`,
      );
    }

    const indexes = await client.query<{
      table: string;
      primary: boolean;
      unique: boolean;
      columns: string[];
    }>(
      `SELECT t.relname AS table, i.indisprimary AS primary, i.indisunique AS unique,
              array_agg(a.attname::text ORDER BY k.ord) AS columns
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
       WHERE n.nspname = $1 AND t.relname <> '_prisma_migrations'
       GROUP BY i.indexrelid, t.relname, i.indisprimary, i.indisunique`,
      [schema],
    );
    for (const i of indexes.rows) {
      const kind = i.primary ? "primary key" : i.unique ? "unique" : "index";
      lines.push(`${kind} ${i.table}(${i.columns.join(",")})`);
    }

    const foreignKeys = await client.query<{
      table: string;
      columns: string[];
      target: string;
      refs: string[];
    }>(
      `SELECT t.relname AS table, r.relname AS target,
              (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum) AS columns,
              (SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum) AS refs
       FROM pg_constraint con
       JOIN pg_class t ON t.oid = con.conrelid JOIN pg_class r ON r.oid = con.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       WHERE con.contype = 'f' AND n.nspname = $1`,
      [schema],
    );
    for (const fk of foreignKeys.rows) {
      lines.push(`foreign key ${fk.table}(${fk.columns.join(",")}) -> ${fk.target}(${fk.refs.join(",")})`);
    }
    return lines.sort();
  } finally {
    await client.end();
  }
}

/** Lines only in the Prisma schema (`+`) or only in the database (`-`). Empty when they agree. */
export function diffSchemas(prisma: string[], database: string[]): string[] {
  const inDb = new Set(database);
  const inPrisma = new Set(prisma);
  return [
    ...prisma.filter((line) => !inDb.has(line)).map((line) => `+ ${line} (schema.prisma only)`),
    ...database.filter((line) => !inPrisma.has(line)).map((line) => `- ${line} (migrations only)`),
  ];
}
