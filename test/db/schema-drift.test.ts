import { readFile } from "node:fs/promises";
import path from "node:path";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { describeDatabase, describePrismaSchema, diffSchemas } from "../support/schema-drift";

const schemaPath = path.resolve(__dirname, "../../prisma/schema.prisma");

describe("schema.prisma and prisma/migrations", () => {
  let database: TestDatabase;
  let migrated: string[];
  let datamodel: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    migrated = await describeDatabase(database.url);
    datamodel = await readFile(schemaPath, "utf8");
  });
  afterAll(() => database.drop());

  it("describe the same tables, columns, types, nullability, keys, indexes and foreign keys", async () => {
    const declared = await describePrismaSchema(datamodel);
    expect(diffSchemas(declared, migrated)).toEqual([]);
    // At least the tables known when this was written (other branches add more).
    expect(declared.filter((line) => line.startsWith("table ")).length).toBeGreaterThanOrEqual(13);
    expect(declared).toContain("table reviews");
  });

  it("would catch a column added to schema.prisma without a migration", async () => {
    const drifted = datamodel.replace(
      /model Order \{\n/,
      'model Order {\n  giftMessage String? @map("gift_message")\n',
    );
    const diff = diffSchemas(await describePrismaSchema(drifted), migrated);
    expect(diff).toEqual(["+ column orders.gift_message text null (schema.prisma only)"]);
  });
});
