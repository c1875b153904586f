import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import ts from "typescript";

/**
 * Issue 38's shape, kept: `createServices` lists the domain modules (each folder composes itself in
 * its module.ts), so it stays short however many features are added; and no function of the returns
 * grows back into one closure of every member. Measured on the parsed source: a function's lines
 * run from its first token (after its leading comment) to its closing brace.
 */

const root = path.resolve(__dirname, "../..");
const limit = 150;

interface FunctionSize {
  name: string;
  where: string;
  lines: number;
}

function functionName(node: ts.Node, source: ts.SourceFile): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name)
    return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return "(anonymous)";
}

/** Every function in a file (declarations, methods, arrows, function expressions), with its length. */
function functionsOf(file: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FunctionSize[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node)
    ) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({
        name: functionName(node, source),
        where: `${path.relative(root, file)}:${first + 1}`,
        lines: last - first + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourcesUnder(full);
      return Promise.resolve(/\.tsx?$/.test(entry.name) ? [full] : []);
    }),
  );
  return files.flat();
}

describe("function sizes", () => {
  it("measures a function from its first line to its closing brace", () => {
    const text = [
      "/** A comment is not counted. */",
      "export function outer() {",
      "  const inner = () => {",
      "    return 1;",
      "  };",
      "  return inner;",
      "}",
    ].join("\n");
    expect(functionsOf(path.join(root, "src/x.ts"), text)).toEqual([
      { name: "outer", where: "src/x.ts:2", lines: 6 },
      { name: "inner", where: "src/x.ts:3", lines: 3 },
    ]);
  });

  it(`src/wiring.ts's createServices is under ${limit} lines: it lists the domain modules`, async () => {
    const file = path.join(root, "src/wiring.ts");
    const createServices = functionsOf(file, await readFile(file, "utf8")).filter(
      (fn) => fn.name === "createServices",
    );
    expect(createServices).toHaveLength(1);
    for (const fn of createServices) expect(fn.lines).toBeLessThan(limit);
  });

  it(`no function in src/returns is over ${limit} lines`, async () => {
    const files = await sourcesUnder(path.join(root, "src/returns"));
    expect(files.length).toBeGreaterThan(10);
    const sizes = (
      await Promise.all(files.map(async (file) => functionsOf(file, await readFile(file, "utf8"))))
    ).flat();
    expect(sizes.length).toBeGreaterThan(50);
    expect(sizes.filter((fn) => fn.lines > limit)).toEqual([]);
  });
});
