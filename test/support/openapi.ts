import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { openApiDocument } from "../../src/openapi/document";

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

/**
 * Holds real responses to GET /openapi.json: finds the operation of a method and URL, and
 * validates the body against the schema the document gives for its status, with Ajv (JSON
 * Schema 2020-12, the dialect of OpenAPI 3.1). Throws, naming the route, when they disagree.
 */
export function createResponseChecker(document = openApiDocument()) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, "openapi.json");
  const doc = document as unknown as Doc;
  const escape = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1");
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  }));
  const checked: string[] = [];
  return {
    /** Every "METHOD /template status" checked so far. */
    checked,
    check(method: string, url: string, status: number, body: unknown): void {
      const path = new URL(url, "http://x").pathname;
      const found = templates.find((t) => t.pattern.test(path));
      const verb = method.toLowerCase();
      if (!found || !doc.paths[found.template]?.[verb])
        throw new Error(`openapi.json has no operation ${method} ${path}`);
      if (!doc.paths[found.template]?.[verb]?.responses[String(status)])
        throw new Error(`openapi.json: ${method} ${found.template} does not document status ${status}`);
      const pointer = [
        "paths",
        found.template,
        verb,
        "responses",
        String(status),
        "content",
        "application/json",
        "schema",
      ]
        .map(escape)
        .join("/");
      const validate = ajv.getSchema(`openapi.json#/${pointer}`);
      if (!validate) throw new Error(`openapi.json: no schema at ${pointer}`);
      if (!validate(body)) {
        throw new Error(
          `${method} ${path} ${status} does not match openapi.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
        );
      }
      checked.push(`${method} ${found.template} ${status}`);
    },
  };
}
