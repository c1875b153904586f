import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog } from "../support/log-capture";

/**
 * A logged-out ops console cookie is refused by every instance of the service on the database,
 * also one started after the logout (a restart), not only by the process that saw the logout.
 */
const adminToken = "revoke-admin-token-0123456789";

describe("ops console logout, across processes and restarts", () => {
  let database: TestDatabase;
  const started: Services[] = [];

  async function startInstance() {
    const services = await createServices({
      config: parseConfig({ NODE_ENV: "test" }),
      logger: captureLog("debug").logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_revoke",
        stripeWebhookSecret: "whsec_revoke_0123456789",
        adminToken,
        easyPost: { apiKey: "EZTK_test_unused" },
      },
    });
    started.push(services);
    return { services, app: buildApp(services) };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const services of started) await services.close();
    await database.drop();
  });

  it("refuses the cookie on another instance at once, and on an instance started after the logout", async () => {
    const first = await startInstance();
    const second = await startInstance();

    const login = await request(first.app)
      .post("/ops/login")
      .type("form")
      .send({ token: adminToken })
      .expect(303);
    const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
    expect(cookie).toMatch(/^ops_session=.+/);

    // Both instances accept the session (one key, derived from the admin token).
    const page = await request(first.app).get("/ops").set("Cookie", cookie).expect(200);
    await request(second.app).get("/ops").set("Cookie", cookie).expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    expect(csrf).toBeDefined();

    await request(first.app)
      .post("/ops/logout")
      .set("Cookie", cookie)
      .type("form")
      .send({ _csrf: csrf })
      .expect(303)
      .expect("Location", "/ops/login");

    // The other replica refuses it now: the revocation is in the database, not in first's memory.
    await request(second.app)
      .get("/ops")
      .set("Cookie", cookie)
      .expect(303)
      .expect("Location", /\/ops\/login/);
    await request(second.app)
      .post("/ops/orders/00000000-0000-4000-8000-000000000000/refund")
      .set("Cookie", cookie)
      .type("form")
      .send({ _csrf: csrf, amount: "1.00" })
      .expect(401);

    // A restart: both processes gone, a new one on the same database.
    for (const services of started.splice(0)) await services.close();
    const restarted = await startInstance();
    await request(restarted.app)
      .get("/ops")
      .set("Cookie", cookie)
      .expect(303)
      .expect("Location", /\/ops\/login/);

    // A fresh login still works there.
    const again = await request(restarted.app)
      .post("/ops/login")
      .type("form")
      .send({ token: adminToken })
      .expect(303);
    const fresh = String(again.headers["set-cookie"]).split(";")[0] as string;
    await request(restarted.app).get("/ops").set("Cookie", fresh).expect(200);
  });
});
