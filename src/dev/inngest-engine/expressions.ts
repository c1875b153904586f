import { celEnv, isCelError, isCelList, isCelMap, isCelUint, parse, plan } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";

type Expr = ReturnType<typeof parse>["expr"];

/**
 * Inngest evaluates `if`, `match`, `cancelOn`, `waitForEvent`, concurrency and idempotency
 * expressions as CEL (cel-go with the strings extension, variables `event` and `async`). The
 * local engine uses a maintained CEL evaluator, `@bufbuild/cel`, so an expression behaves as it
 * will on Inngest: operators, `in`, `size()`, `has()`, macros (`exists`, `all`, `map`...), string
 * functions (`startsWith`, `contains`, `matches`, `lowerAscii`...). Expressions are compiled
 * at sync; a syntax error or a variable other than `event`/`async` rejects the sync, as the
 * cel-go checker would.
 */
export class ExpressionError extends Error {
  constructor(
    readonly expression: string,
    reason: string,
  ) {
    super(`Unsupported expression "${expression}": ${reason}`);
    this.name = "ExpressionError";
  }
}

export type ExpressionVars = { event?: unknown; async?: unknown };

export interface CompiledExpression {
  source: string;
  /** The expression's value; throws when CEL would raise an error. */
  value(vars: ExpressionVars): unknown;
  /** True only when the expression evaluates to boolean true (an error does not match). */
  matches(vars: ExpressionVars): boolean;
  /** The value as a key string (concurrency, idempotency), undefined when it cannot be evaluated. */
  key(vars: ExpressionVars): string | undefined;
}

const env = celEnv({ funcs: strings });
const variables = new Set(["event", "async"]);

/** Every identifier must be `event`, `async` or a comprehension's own variable. */
function checkIdentifiers(expr: Expr | undefined, scope: Set<string>, source: string): void {
  if (!expr) return;
  const kind = expr.exprKind;
  switch (kind.case) {
    case "identExpr":
      if (!scope.has(kind.value.name))
        throw new ExpressionError(source, `undeclared reference to '${kind.value.name}'`);
      return;
    case "selectExpr":
      return checkIdentifiers(kind.value.operand, scope, source);
    case "callExpr":
      checkIdentifiers(kind.value.target, scope, source);
      for (const arg of kind.value.args) checkIdentifiers(arg, scope, source);
      return;
    case "listExpr":
      for (const element of kind.value.elements) checkIdentifiers(element, scope, source);
      return;
    case "structExpr":
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === "mapKey") checkIdentifiers(entry.keyKind.value, scope, source);
        checkIdentifiers(entry.value, scope, source);
      }
      return;
    case "comprehensionExpr": {
      const c = kind.value;
      checkIdentifiers(c.iterRange, scope, source);
      checkIdentifiers(c.accuInit, scope, source);
      const inner = new Set([...scope, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])]);
      checkIdentifiers(c.loopCondition, inner, source);
      checkIdentifiers(c.loopStep, inner, source);
      checkIdentifiers(c.result, inner, source);
      return;
    }
    default:
      return;
  }
}

/** CEL values back to plain JSON-ish values (ints are bigint, lists and maps are wrappers). */
function toPlain(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (isCelUint(value)) return Number(value.value);
  if (isCelList(value)) return [...value].map(toPlain);
  if (isCelMap(value)) return Object.fromEntries([...value].map(([k, v]) => [String(k), toPlain(v)]));
  return value;
}

export function compileExpression(source: string): CompiledExpression {
  let evaluate: (vars: ExpressionVars) => unknown;
  try {
    const parsed = parse(source);
    checkIdentifiers(parsed.expr, variables, source);
    const run = plan(env, parsed);
    // Variables the caller does not bind (no `async` for a trigger) are errors, not null.
    evaluate = (vars) =>
      run(Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== undefined)) as never);
  } catch (error) {
    if (error instanceof ExpressionError) throw error;
    throw new ExpressionError(source, error instanceof Error ? error.message : String(error));
  }
  const value = (vars: ExpressionVars): unknown => {
    const result = evaluate(vars);
    if (isCelError(result)) throw new Error(`CEL error in "${source}": ${result.message}`);
    return toPlain(result);
  };
  return {
    source,
    value,
    matches(vars) {
      return evaluate(vars) === true;
    },
    key(vars) {
      const result = evaluate(vars);
      if (isCelError(result)) return undefined;
      const plain = toPlain(result);
      return typeof plain === "string" ? plain : JSON.stringify(plain);
    },
  };
}
