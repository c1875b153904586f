import { createLocalEngine, type LocalEngine } from "../../../src/dev/inngest-engine";
import { createLogger } from "../../../src/logger";
import { createTestDatabase, type TestDatabase } from "../../support/database";

/** The engine's session advisory lock on its schema keeps a second engine out of the same state. */
describe("the local engine's schema lock", () => {
  const logger = createLogger({ level: "silent" });
  let database: TestDatabase;
  const engines: LocalEngine[] = [];
  const engine = () => {
    const created = createLocalEngine({ databaseUrl: database.url, logger });
    engines.push(created);
    return created;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const created of engines) await created.close().catch(() => undefined);
    await database.drop();
  });

  it("keeps a second engine on the same schema out while the first runs, and lets one in once it closed", async () => {
    const first = engine();
    await first.ready();

    const second = engine();
    await expect(second.ready()).rejects.toThrow(
      /Another local Inngest engine already uses schema "inngest_local"/,
    );

    await first.close();
    const third = engine();
    await expect(third.ready()).resolves.toBeUndefined();
  });

  it("lets an engine on another schema of the same database run beside it", async () => {
    const other = createLocalEngine({ databaseUrl: database.url, logger, schema: "inngest_other" });
    engines.push(other);
    await expect(other.ready()).resolves.toBeUndefined();
  });
});
