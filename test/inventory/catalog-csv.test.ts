import { createServer } from "node:http";
import { buildApp } from "../../src/app";
import { createCatalog } from "../../src/inventory/catalog";
import { createCatalogCsv, escapeCsvCell, unescapeCsvCell } from "../../src/inventory/catalog-csv";
import { catalogAdminRoutes } from "../../src/inventory/catalog-routes";
import { createLowStockWatch } from "../../src/inventory/low-stock";
import { createStockLedger } from "../../src/inventory/stock-ledger";
import { createLogger } from "../../src/logger";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { listenOnLoopback } from "../support/loopback-server";
import { createResponseChecker } from "../support/openapi";

// The answers are held to openapi.json by the contract checker; the assertions read them loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type JsonAnswer = Record<string, any>;

const adminToken = "catalog-csv-admin-token-0123456789";
const contract = createResponseChecker();

describe("CSV import and export of products and stock counts", () => {
  let database: TestDatabase;
  let server: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    database = await createTestDatabase();
    const lowStock = createLowStockWatch(database.db, {
      alerts: { notify: async () => undefined, runFailed: async () => undefined },
    });
    const catalog = createCatalog(database.db, { ledger: createStockLedger(database.db), lowStock });
    const app = buildApp({
      logger: createLogger({ level: "silent" }),
      readiness: async () => ({ ready: true, checks: {} }) as never,
      catalogAdmin: catalogAdminRoutes({
        adminToken,
        catalog,
        csv: createCatalogCsv(database.db, { lowStock }),
      }),
    });
    server = await listenOnLoopback(createServer(app));
  });
  afterAll(async () => {
    await server.close();
    await database.drop();
  });

  const importCsv = async (csv: string, dryRun = false) => {
    const res = await fetch(`${server.url}/api/admin/products/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ csv, dryRun }),
    });
    const body = (await res.json()) as JsonAnswer;
    contract.check("POST", "/api/admin/products/import", res.status, body);
    return { status: res.status, body };
  };
  const exportCsv = async () => {
    const res = await fetch(`${server.url}/api/admin/products/export.csv`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    return res.text();
  };
  const snapshot = async () => ({
    products: await database.db.product.findMany({ orderBy: { sku: "asc" } }),
    movements: await database.db.stockMovement.count(),
  });

  const sheet = [
    "sku,name,unitPrice,currency,weightOz,stockOnHand,lowStockThreshold,digital",
    "MUG-1,Logo mug,1200,usd,14,50,5,false",
    'TEE-1,"T-shirt, black",2500,USD,6,100,,false',
    "EBOOK-1,Field guide,900,usd,,0,,true",
  ].join("\n");

  it("a dry run reports what would change and changes nothing", async () => {
    const dry = await importCsv(sheet, true);
    expect(dry.status).toBe(200);
    expect(dry.body.summary).toEqual({ create: 3, update: 0, unchanged: 0 });
    expect(dry.body.rows[1]).toMatchObject({ line: 3, sku: "TEE-1", action: "create" });
    expect(dry.body.rows[1].changes.name).toEqual([null, "T-shirt, black"]);
    expect(await database.db.product.count()).toBe(0);
  });

  it("imports the sheet, its stock as received ledger rows", async () => {
    const done = await importCsv(sheet);
    expect(done.status).toBe(201);
    expect(done.body.summary).toEqual({ create: 3, update: 0, unchanged: 0 });
    const tee = await database.db.product.findUniqueOrThrow({ where: { sku: "TEE-1" } });
    expect([tee.name, tee.currency, tee.stockOnHand, tee.weightOz]).toEqual([
      "T-shirt, black",
      "usd",
      100,
      6,
    ]);
    const movements = await database.db.stockMovement.findMany({ where: { sku: "MUG-1" } });
    expect(movements.map((m) => [m.reason, m.delta, m.actor])).toEqual([["received", 50, "admin-api"]]);
  });

  it("refuses a file with a bad row whole, naming the line and the field", async () => {
    const before = await snapshot();
    const bad = await importCsv(
      [
        "sku,name,unitPrice,currency,stockOnHand",
        "MUG-1,Logo mug,1300,usd,40",
        "NEW-1,New thing,-5,usd,3",
        "NEW-2,,100,euro,1",
        "NEW-1,Twice,100,usd,1",
      ].join("\n"),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(bad.body.error.details.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ line: 3, field: "unitPrice" }),
        expect.objectContaining({ line: 4, field: "name" }),
        expect.objectContaining({ line: 4, field: "currency" }),
        expect.objectContaining({ line: 5, field: "sku" }),
      ]),
    );
    expect(bad.body.error.message).toMatch(/line 3, unitPrice/);
    expect(await snapshot()).toEqual(before);

    const unknownColumn = await importCsv("sku,name,unitPrice,currency,colour\nX-1,X,1,usd,red");
    expect(unknownColumn.body.error.details.errors).toEqual([
      expect.objectContaining({ line: 1, field: "colour" }),
    ]);
  });

  it("exports a file that imports back unchanged", async () => {
    const [first] = (await snapshot()).products;
    await database.db.product.update({
      where: { sku: first?.sku ?? "" },
      data: { taxCode: "txcd_99999999" },
    });
    const exported = await exportCsv();
    expect(exported.split("\n")[1]).toMatch(/,txcd_99999999$/);
    expect(exported.split("\n")[0]).toBe(
      "sku,name,unitPrice,currency,digital,weightOz,lengthIn,widthIn,heightIn,lowStockThreshold,stockOnHand,archived,shipsAlone,taxCode",
    );
    const before = await snapshot();
    const again = await importCsv(exported);
    expect(again.status).toBe(201);
    expect(again.body.summary).toEqual({ create: 0, update: 0, unchanged: 3 });
    expect(await snapshot()).toEqual(before);
    expect(await exportCsv()).toBe(exported);
  });

  it("a stock count in the file is a counted movement of the difference", async () => {
    const exported = await exportCsv();
    const changed = exported.replace(
      "MUG-1,Logo mug,1200,usd,false,14,,,,5,50,false",
      "MUG-1,Logo mug,1250,usd,false,14,,,,5,47,false",
    );
    expect(changed).not.toBe(exported);
    const dry = await importCsv(changed, true);
    expect(dry.body.rows.find((r: { sku: string }) => r.sku === "MUG-1")).toMatchObject({
      action: "update",
      changes: { unitPrice: [1200, 1250], stockOnHand: [50, 47] },
    });
    await importCsv(changed);
    const mug = await database.db.product.findUniqueOrThrow({ where: { sku: "MUG-1" } });
    expect([mug.unitPrice, mug.stockOnHand, mug.version]).toEqual([1250, 47, 2]);
    const last = await database.db.stockMovement.findFirstOrThrow({
      where: { sku: "MUG-1" },
      orderBy: { id: "desc" },
    });
    expect([last.reason, last.delta, last.note]).toEqual(["counted", -3, "CSV import, line 3"]);
  });

  it("escapes cells a spreadsheet would run as a formula, and an import of the export gives them back", async () => {
    const names = [
      '=HYPERLINK("http://evil.example","x")',
      "+1 mug",
      "-20% tee",
      "@SUM(A1)",
      "'=already quoted",
    ];
    // Written as the export writes them: the import reads its escaping back.
    const rows = names.map(
      (name, index) => `FORMULA-${index},"${escapeCsvCell(name).replace(/"/g, '""')}",100,usd`,
    );
    expect((await importCsv(["sku,name,unitPrice,currency", ...rows].join("\n"))).status).toBe(201);
    const exported = await exportCsv();
    // Every such cell starts with ' inside quotes: text to a spreadsheet, never a formula.
    expect(exported).toContain(`FORMULA-0,"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(exported).toContain(`FORMULA-1,"'+1 mug"`);
    expect(exported).toContain(`FORMULA-2,"'-20% tee"`);
    expect(exported).toContain(`FORMULA-3,"'@SUM(A1)"`);
    expect(exported).toContain(`FORMULA-4,"''=already quoted"`);
    for (const line of exported.split("\n").filter((l) => l.startsWith("FORMULA-"))) {
      const nameCell = line.split(",")[1] ?? "";
      expect(nameCell).not.toMatch(/^"?[=+\-@\t\r]/);
    }

    const stored = async () =>
      (
        await database.db.product.findMany({
          where: { sku: { startsWith: "FORMULA-" } },
          orderBy: { sku: "asc" },
        })
      ).map((product) => product.name);
    expect(await stored()).toEqual(names);
    const before = await snapshot();
    const again = await importCsv(exported);
    expect(again.status).toBe(201);
    expect(again.body.summary.update).toBe(0);
    expect(await snapshot()).toEqual(before);
    expect(await stored()).toEqual(names);
  });

  it("keeps the catalog's rules: no SKU twin by case, no currency change once ordered, no price 0, no xxx", async () => {
    const before = await snapshot();
    const twin = await importCsv("sku,name,unitPrice,currency\nmug-1,Twin of MUG-1,100,usd");
    expect(twin.status).toBe(400);
    expect(twin.body.error.details.errors).toEqual([
      expect.objectContaining({ line: 2, field: "sku", message: expect.stringMatching(/MUG-1 exists/) }),
    ]);
    const inFile = await importCsv("sku,name,unitPrice,currency\nNEW-1,A,100,usd\nnew-1,B,100,usd");
    expect(inFile.status).toBe(400);
    expect(inFile.body.error.details.errors[0]).toMatchObject({ line: 3, field: "sku" });
    const rules = await importCsv("sku,name,unitPrice,currency\nFREE-1,Free,0,usd\nXXX-1,Test,100,xxx");
    expect(rules.status).toBe(400);
    expect(rules.body.error.details.errors).toEqual([
      expect.objectContaining({ line: 2, field: "unitPrice", message: expect.stringMatching(/minor unit/) }),
      expect.objectContaining({ line: 3, field: "currency" }),
    ]);

    await database.db.order.create({
      data: {
        customerId: "cus_csv",
        email: "csv@example.com",
        currency: "usd",
        total: 1200,
        lines: { create: [{ sku: "MUG-1", name: "Logo mug", unitPrice: 1200, quantity: 1 }] },
      },
    });
    const mug = (await exportCsv()).split("\n").find((line) => line.startsWith("MUG-1,")) as string;
    const recurrency = await importCsv(`${csvHeader()}\n${mug.replace(",usd,", ",eur,")}`);
    expect(recurrency.status).toBe(400);
    expect(recurrency.body.error.details.errors).toEqual([
      expect.objectContaining({ field: "currency", message: expect.stringMatching(/ordered in usd/) }),
    ]);
    expect(await snapshot()).toEqual(before);
  });

  const csvHeader = () =>
    "sku,name,unitPrice,currency,digital,weightOz,lengthIn,widthIn,heightIn,lowStockThreshold,stockOnHand,archived,shipsAlone,taxCode";
});

describe("CSV cell escaping (OWASP CSV injection)", () => {
  it.each([
    ["=1+2", "'=1+2"],
    ["+41 22", "'+41 22"],
    ["-3", "'-3"],
    ["@cmd", "'@cmd"],
    ["\tTab", "'\tTab"],
    ["\rCR", "'\rCR"],
    ["'=x", "''=x"],
    ["Plain mug", "Plain mug"],
    ["'quoted", "'quoted"],
    ["a=b", "a=b"],
  ])("%j is written as %j and read back", (cell, escaped) => {
    expect(escapeCsvCell(cell)).toBe(escaped);
    expect(unescapeCsvCell(escaped)).toBe(cell);
  });
});
