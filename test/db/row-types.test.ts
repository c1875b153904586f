import path from "node:path";
import { Client } from "pg";
import ts from "typescript";
import { intakeStatements } from "../../src/orders/intake/intake-repository";
import {
  fenceStatement,
  recordCaptureStatement,
  recordShipmentStatement,
} from "../../src/orders/fulfilment-records";
import { leaseStatement, sendStatement } from "../../src/notifications/email-sender";
import { bookingStatement, destinationStatement } from "../../src/shipping/shipping-destinations";
import { timelineListStatement } from "../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The hot statements' row types are written by hand beside each statement (docs/architecture.md).
 * This asks PostgreSQL what each statement returns on the migrated schema (which
 * test/db/schema-drift.test.ts holds to schema.prisma): the parameter types of the prepared
 * statement, then its columns and their types from a run inside a transaction rolled back, with
 * parameters that match no row. The declared row type is read with the TypeScript checker from
 * the source, so a renamed column, a column the type forgets, or a type that became another
 * (an int8 read as a number, a timestamp read as a string) fails here.
 */
const root = path.resolve(__dirname, "../..");

interface Checked {
  name: string;
  text: string;
  /** The module that declares the row type, and the type as the call site writes it. */
  module: string;
  rowType: string;
  imports: string[];
  /** Parameters where the harmless ones would break a constraint (a foreign key) before any row. */
  parameters?: unknown[];
}

const intake = "src/orders/intake/intake-repository.ts";
const checked: Checked[] = [
  ...Object.entries(intakeStatements).map(([name, text]) => ({
    name: `intake ${name}`,
    text,
    module: intake,
    rowType: name.startsWith("peek")
      ? "Row & { recorded: boolean }"
      : name === "recordPlacement" || name === "recordTransition"
        ? "Row & { terms_match: boolean }"
        : "Row",
    imports: ["Row"],
  })),
  {
    name: "fulfilment recordCapture",
    text: recordCaptureStatement,
    module: "src/orders/fulfilment-records.ts",
    rowType: "GuardRow & { payment_id: string | null }",
    imports: ["GuardRow"],
  },
  {
    name: "fulfilment recordShipment",
    text: recordShipmentStatement,
    module: "src/orders/fulfilment-records.ts",
    rowType: "GuardRow",
    imports: ["GuardRow"],
  },
  {
    name: "e-mail lease",
    text: leaseStatement,
    module: "src/notifications/email-sender.ts",
    rowType: "LeasedRow",
    imports: ["LeasedRow"],
  },
  {
    name: "e-mail send",
    text: sendStatement,
    module: "src/notifications/email-sender.ts",
    rowType: "LeasedRow",
    imports: ["LeasedRow"],
    // An e-mail with no order (order_id null): the row is inserted, then rolled back.
    parameters: [
      "00000000-0000-4000-8000-00000000beef",
      "row-type-check",
      null,
      "orderShipped",
      "someone@example.com",
      "<m@x>",
      new Date(0),
      "s",
      "t",
      "h",
      new Date(0),
    ],
  },
  {
    name: "timeline list",
    text: timelineListStatement,
    module: "src/timeline/timeline.ts",
    rowType: "EntryRow",
    imports: ["EntryRow"],
  },
  {
    name: "shipping destination",
    text: destinationStatement,
    module: "src/shipping/shipping-destinations.ts",
    rowType: "DestinationRow",
    imports: ["DestinationRow"],
  },
  {
    name: "shipping destination with parcels",
    text: bookingStatement,
    module: "src/shipping/shipping-destinations.ts",
    rowType: "BookingRow",
    imports: ["BookingRow"],
  },
  {
    name: "fulfilment fenceForCancel",
    text: fenceStatement,
    module: "src/orders/fulfilment-records.ts",
    rowType: "FenceRow",
    imports: ["FenceRow"],
  },
];

type Kind = "string" | "number" | "boolean" | "Date" | "json";

/** The JavaScript value node-postgres gives for a column of this type (its default parsers). */
function kindOfColumn(typname: string, typtype: string): Kind | `unmapped ${string}` {
  if (typtype === "e") return "string";
  if (["text", "varchar", "bpchar", "uuid", "name", "int8", "numeric"].includes(typname)) return "string";
  if (["int2", "int4", "float4", "float8", "oid"].includes(typname)) return "number";
  if (typname === "bool") return "boolean";
  if (["timestamptz", "timestamp", "date"].includes(typname)) return "Date";
  if (typname === "json" || typname === "jsonb") return "json";
  return `unmapped ${typname}`;
}

/** The declared row types' properties, each as the kind of value it accepts (null aside). */
function declaredRows(): Map<string, Record<string, Kind | string>> {
  const probe = path.join(root, "test/db/__row-types-probe.ts");
  const source = checked
    .map(
      (entry, i) =>
        (entry.imports.length > 0
          ? `import type { ${entry.imports.join(", ")} } from "../../${entry.module.replace(/\.ts$/, "")}";\n`
          : "") + `export type Row${i} = ${entry.rowType};`,
    )
    .join("\n");
  // One import per module name: TypeScript refuses a name imported twice.
  const lines = [...new Set(source.split("\n").filter((line) => line.startsWith("import")))];
  const body = source.split("\n").filter((line) => !line.startsWith("import"));
  const text = [...lines, ...body].join("\n");
  const options: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => (path.resolve(file) === probe ? text : readFile(file));
  host.fileExists = (file) => path.resolve(file) === probe || ts.sys.fileExists(file);
  host.getSourceFile = (file, language) =>
    path.resolve(file) === probe ? ts.createSourceFile(file, text, language) : getSourceFile(file, language);
  const program = ts.createProgram([probe], options, host);
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(probe);
  if (!file) throw new Error("the probe file was not compiled");
  const problems = ts
    .getPreEmitDiagnostics(program, file)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  if (problems.length > 0) throw new Error(`row types do not compile: ${problems.join("; ")}`);

  const kindOf = (type: ts.Type): string => {
    const parts = (type.isUnion() ? type.types : [type]).filter(
      (part) => !(part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)),
    );
    const kinds = new Set(
      parts.map((part) => {
        if (part.flags & ts.TypeFlags.StringLike) return "string";
        if (part.flags & ts.TypeFlags.NumberLike) return "number";
        if (part.flags & ts.TypeFlags.BooleanLike) return "boolean";
        if (part.flags & ts.TypeFlags.Unknown || part.flags & ts.TypeFlags.Any) return "json";
        if (checker.typeToString(part) === "Date") return "Date";
        if (part.flags & ts.TypeFlags.Object) return "json";
        return checker.typeToString(part);
      }),
    );
    return [...kinds].join(" | ");
  };

  const rows = new Map<string, Record<string, string>>();
  checked.forEach((entry, i) => {
    const alias = file.statements.find(
      (statement): statement is ts.TypeAliasDeclaration =>
        ts.isTypeAliasDeclaration(statement) && statement.name.text === `Row${i}`,
    );
    if (!alias) throw new Error(`no alias for ${entry.name}`);
    const type = checker.getTypeAtLocation(alias.name);
    rows.set(
      entry.name,
      Object.fromEntries(
        checker
          .getPropertiesOfType(type)
          .map((property) => [property.name, kindOf(checker.getTypeOfSymbolAtLocation(property, alias))]),
      ),
    );
  });
  return rows;
}

/** A value of each parameter type that matches no row. */
function harmless(type: string): unknown {
  if (type.endsWith("[]")) return [];
  if (type === "uuid") return "00000000-0000-4000-8000-00000000dead";
  if (["integer", "bigint", "smallint", "numeric"].includes(type)) return 0;
  if (type === "boolean") return false;
  if (type === "jsonb" || type === "json") return "{}";
  if (type.startsWith("timestamp")) return new Date(0);
  // Three letters: fits a character(3) (a currency) and matches no row.
  return "zzz";
}

describe("hot statements return the columns and types their row types declare", () => {
  let database: TestDatabase;
  let client: Client;
  let declared: Map<string, Record<string, string>>;

  beforeAll(async () => {
    database = await createTestDatabase();
    client = new Client({ connectionString: database.url });
    await client.connect();
    declared = declaredRows();
  });

  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  it.each(checked.map((entry) => [entry.name, entry] as const))("%s", async (_name, entry) => {
    await client.query("BEGIN");
    try {
      await client.query(`PREPARE described AS ${entry.text}`);
      const { rows } = await client.query<{ parameter_types: string[] }>(
        `SELECT parameter_types::text[] AS parameter_types FROM pg_prepared_statements WHERE name = 'described'`,
      );
      const parameters =
        entry.parameters ??
        (await Promise.all(
          (rows[0]?.parameter_types ?? []).map(async (type) => {
            // An enum takes one of its labels.
            const label = await client.query<{ enumlabel: string }>(
              `SELECT e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
             WHERE t.typname = $1 ORDER BY e.enumsortorder LIMIT 1`,
              [type],
            );
            return label.rows[0]?.enumlabel ?? harmless(type);
          }),
        ));
      const result = await client.query(entry.text, parameters);
      const types = await client.query<{ oid: number; typname: string; typtype: string }>(
        `SELECT oid::int AS oid, typname, typtype FROM pg_type WHERE oid = ANY($1::oid[])`,
        [result.fields.map((field) => field.dataTypeID)],
      );
      const byOid = new Map(types.rows.map((type) => [type.oid, type]));
      const described = Object.fromEntries(
        result.fields.map((field) => {
          const type = byOid.get(field.dataTypeID);
          return [field.name, type ? kindOfColumn(type.typname, type.typtype) : `oid ${field.dataTypeID}`];
        }),
      );
      expect(described).toEqual(declared.get(entry.name));
    } finally {
      await client.query("ROLLBACK");
      // A prepared statement outlives the transaction.
      await client.query("DEALLOCATE ALL");
    }
  });
});
