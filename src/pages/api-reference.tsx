import { Router } from "express";
import { openApiDocument } from "../openapi/document";
import { Layout, sendPage } from "./layout";

type Operation = {
  summary?: string;
  security?: Record<string, unknown>[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string }>;
};

/**
 * GET /api-docs: /openapi.json rendered as a page, from the same document. Our own few lines of
 * preact rather than Swagger UI or Redoc: those are browser bundles fetched or served as a front
 * end, and this page only needs to list routes, who may call them, their bodies and their answers.
 */
function ApiReference() {
  const document = openApiDocument() as unknown as {
    info: { title: string; description: string };
    paths: Record<string, Record<string, Operation>>;
  };
  return (
    <Layout title="API reference" brand={document.info.title}>
      <h1>API reference</h1>
      <p>
        {document.info.description} The machine-readable contract: <a href="/openapi.json">/openapi.json</a>{" "}
        (OpenAPI 3.1).
      </p>
      {Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.entries(operations).map(([method, operation]) => (
          <section class="card" key={`${method} ${path}`} id={`${method}-${path}`}>
            <h2>
              <code>
                {method.toUpperCase()} {path}
              </code>
            </h2>
            <p>{operation.summary}</p>
            {operation.security ? (
              <p>Auth: {operation.security.map((scheme) => Object.keys(scheme)[0] ?? "none").join(" or ")}</p>
            ) : null}
            {operation.requestBody ? (
              <details>
                <summary>Request body</summary>
                <pre>{JSON.stringify(Object.values(operation.requestBody.content)[0]?.schema, null, 2)}</pre>
              </details>
            ) : null}
            <table>
              <tbody>
                {Object.entries(operation.responses).map(([status, response]) => (
                  <tr key={status}>
                    <td>{status}</td>
                    <td>{response.description}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )),
      )}
    </Layout>
  );
}

export function apiReferencePage(): Router {
  const router = Router();
  router.get("/api-docs", (_req, res) => {
    sendPage(res, <ApiReference />);
  });
  return router;
}
