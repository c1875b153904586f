import { createServer } from "node:http";
import { buildApp } from "../../src/app";
import { createLogger } from "../../src/logger";
import { openApiDocument } from "../../src/openapi/document";
import { apiReferencePage } from "../../src/pages/api-reference";
import { IntakeHarness } from "../orders/intake-harness";
import { listenOnLoopback } from "../support/loopback-server";
import { createResponseChecker } from "../support/openapi";

describe("GET /openapi.json", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start();
  });
  afterAll(() => h.close());

  it("is served, and documents every route of the service with its error codes", async () => {
    const app = buildApp({
      logger: createLogger({ level: "silent" }),
      readiness: async () => ({ ready: true, checks: {} }) as never,
    });
    const server = await listenOnLoopback(createServer(app));
    try {
      const res = await fetch(`${server.url}/openapi.json`);
      expect(res.status).toBe(200);
      const served = (await res.json()) as {
        openapi: string;
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
      expect(served.openapi).toBe("3.1.0");
      expect(Object.keys(served.paths)).toEqual(
        expect.arrayContaining([
          "/api/products",
          "/api/checkout",
          "/api/stripe/webhook",
          "/api/carrier/webhook",
          "/api/orders",
          "/api/orders/{id}",
          "/api/orders/{id}/cancel",
          "/api/orders/{id}/refund",
          "/api/orders/{id}/redrive",
          "/api/orders/{id}/emails/{emailId}/resend",
          "/api/admin/products",
          "/api/admin/products/{sku}",
          "/api/admin/products/{sku}/stock",
        ]),
      );
      const stockErrors = served.paths["/api/admin/products/{sku}/stock"]?.post?.responses ?? {};
      expect(Object.keys(stockErrors)).toEqual(expect.arrayContaining(["201", "400", "401", "404", "409"]));
    } finally {
      await server.close();
    }
  });

  it("holds the checkout's real answers, good and bad, to the contract", async () => {
    const contract = createResponseChecker();
    const post = async (body: unknown) => {
      const res = await fetch(`${h.url}/api/checkout`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      contract.check("POST", "/api/checkout", res.status, await res.json());
      return res.status;
    };
    expect(
      await post({ customerId: "c-1", email: "a@example.com", items: [{ sku: "MUG", quantity: 1 }] }),
    ).toBe(201);
    expect(await post({ customerId: "c-1", email: "a@example.com", items: [] })).toBe(400);
    expect(await post({ customerId: "c-1", email: "nope", items: [{ sku: "MUG", quantity: 1 }] })).toBe(400);
    expect(
      await post({ customerId: "c-1", email: "a@example.com", items: [{ sku: "NOPE", quantity: 1 }] }),
    ).toBe(400);
    expect(
      await post({ customerId: "c-1", email: "a@example.com", items: [{ sku: "POSTER", quantity: 50 }] }),
    ).toBe(409);
    expect(await post("{not json")).toBe(400);
    const products = await fetch(`${h.url}/api/products`);
    contract.check("GET", "/api/products", 200, await products.json());
    expect(contract.checked).toHaveLength(7);
  });

  it("is rendered at /api-docs from the same document", async () => {
    const app = buildApp({
      logger: createLogger({ level: "silent" }),
      readiness: async () => ({ ready: true, checks: {} }) as never,
      pages: apiReferencePage(),
    });
    const server = await listenOnLoopback(createServer(app));
    try {
      const res = await fetch(`${server.url}/api-docs`);
      expect(res.status).toBe(200);
      const html = await res.text();
      for (const path of Object.keys((openApiDocument() as { paths: object }).paths)) {
        expect(html).toContain(` ${path}</code>`);
      }
      expect(html).toContain("PATCH /api/admin/products/{sku}");
    } finally {
      await server.close();
    }
  });

  it("catches an answer that breaks it", () => {
    const contract = createResponseChecker();
    expect(() => contract.check("GET", "/api/products", 200, { products: [{ sku: 1 }] })).toThrow(
      /does not match/,
    );
    expect(() => contract.check("POST", "/api/checkout", 418, {})).toThrow(/does not document status 418/);
  });
});
