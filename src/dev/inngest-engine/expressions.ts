/**
 * The subset of CEL that the local engine understands: paths rooted at `event` or `async`
 * (`event.data.orderId`), string/number/bool/null literals, `== != < <= > >=`, `! && ||` and
 * parentheses. Anything else is refused when compiling, so an app that relies on more CEL
 * fails loudly at sync time instead of silently never matching.
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

/** Raised while evaluating (missing field, type mismatch); a condition that raises does not match. */
class EvaluationError extends Error {}

export type ExpressionVars = { event?: unknown; async?: unknown };

export interface CompiledExpression {
  source: string;
  /** The expression's value; throws when CEL would raise an error. */
  value(vars: ExpressionVars): unknown;
  /** True only when the expression evaluates to boolean true. */
  matches(vars: ExpressionVars): boolean;
  /** The value as a key string (concurrency, idempotency), undefined when it cannot be evaluated. */
  key(vars: ExpressionVars): string | undefined;
}

type Node =
  | { kind: "literal"; value: unknown }
  | { kind: "path"; root: "event" | "async"; fields: string[] }
  | { kind: "not"; operand: Node }
  | { kind: "binary"; op: BinaryOp; left: Node; right: Node };

type BinaryOp = "==" | "!=" | "<" | "<=" | ">" | ">=" | "&&" | "||";

type Token =
  | { type: "ident"; text: string; pos: number }
  | { type: "string"; value: string; pos: number }
  | { type: "number"; value: number; pos: number }
  | { type: "op"; text: string; pos: number };

const operators = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "."];

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i] ?? "";
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i));
      const text = match?.[0] ?? ch;
      tokens.push({ type: "ident", text, pos: i });
      i += text.length;
      continue;
    }
    if (/[0-9]/.test(ch) || (ch === "-" && /[0-9]/.test(source[i + 1] ?? ""))) {
      const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(source.slice(i));
      const text = match?.[0] ?? ch;
      tokens.push({ type: "number", value: Number(text), pos: i });
      i += text.length;
      continue;
    }
    if (ch === '"' || ch === "'") {
      let value = "";
      let j = i + 1;
      for (; j < source.length && source[j] !== ch; j++) {
        if (source[j] === "\\") {
          const escaped = source[j + 1] ?? "";
          const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'" };
          const replacement = map[escaped];
          if (replacement === undefined) throw new ExpressionError(source, `unsupported escape \\${escaped}`);
          value += replacement;
          j++;
        } else {
          value += source[j];
        }
      }
      if (j >= source.length) throw new ExpressionError(source, "unterminated string");
      tokens.push({ type: "string", value, pos: i });
      i = j + 1;
      continue;
    }
    const op = operators.find((candidate) => source.startsWith(candidate, i));
    if (!op) throw new ExpressionError(source, `unexpected "${ch}" at ${i}`);
    tokens.push({ type: "op", text: op, pos: i });
    i += op.length;
  }
  return tokens;
}

class Parser {
  private index = 0;
  constructor(
    private readonly source: string,
    private readonly tokens: Token[],
  ) {}

  parse(): Node {
    if (this.tokens.length === 0) throw new ExpressionError(this.source, "empty expression");
    const node = this.or();
    const rest = this.tokens[this.index];
    if (rest) throw new ExpressionError(this.source, `unexpected ${describe(rest)} at ${rest.pos}`);
    return node;
  }

  private peekOp(...ops: string[]): string | undefined {
    const token = this.tokens[this.index];
    return token?.type === "op" && ops.includes(token.text) ? token.text : undefined;
  }

  private or(): Node {
    let left = this.and();
    while (this.peekOp("||")) {
      this.index++;
      left = { kind: "binary", op: "||", left, right: this.and() };
    }
    return left;
  }

  private and(): Node {
    let left = this.comparison();
    while (this.peekOp("&&")) {
      this.index++;
      left = { kind: "binary", op: "&&", left, right: this.comparison() };
    }
    return left;
  }

  private comparison(): Node {
    const left = this.unary();
    const op = this.peekOp("==", "!=", "<", "<=", ">", ">=") as BinaryOp | undefined;
    if (!op) return left;
    this.index++;
    const right = this.unary();
    if (this.peekOp("==", "!=", "<", "<=", ">", ">=")) {
      throw new ExpressionError(this.source, "chained comparisons need parentheses");
    }
    return { kind: "binary", op, left, right };
  }

  private unary(): Node {
    if (this.peekOp("!")) {
      this.index++;
      return { kind: "not", operand: this.unary() };
    }
    return this.primary();
  }

  private primary(): Node {
    const token = this.tokens[this.index];
    if (!token) throw new ExpressionError(this.source, "unexpected end of expression");
    this.index++;
    if (token.type === "string" || token.type === "number") return { kind: "literal", value: token.value };
    if (token.type === "op") {
      if (token.text !== "(")
        throw new ExpressionError(this.source, `unexpected ${describe(token)} at ${token.pos}`);
      const inner = this.or();
      if (!this.peekOp(")")) throw new ExpressionError(this.source, "missing )");
      this.index++;
      return inner;
    }
    if (token.text === "true" || token.text === "false")
      return { kind: "literal", value: token.text === "true" };
    if (token.text === "null") return { kind: "literal", value: null };
    if (token.text !== "event" && token.text !== "async") {
      throw new ExpressionError(
        this.source,
        `unknown identifier "${token.text}" (only event.* and async.* are supported)`,
      );
    }
    const fields: string[] = [];
    while (this.peekOp(".")) {
      this.index++;
      const field = this.tokens[this.index];
      if (field?.type !== "ident") throw new ExpressionError(this.source, 'expected a field name after "."');
      this.index++;
      fields.push(field.text);
    }
    if (this.peekOp("("))
      throw new ExpressionError(this.source, "function and method calls are not supported");
    return { kind: "path", root: token.text, fields };
  }
}

function describe(token: Token): string {
  if (token.type === "ident" || token.type === "op") return `"${token.text}"`;
  return `${token.type} ${JSON.stringify(token.value)}`;
}

function evaluate(node: Node, vars: ExpressionVars): unknown {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "path": {
      let current: unknown = vars[node.root];
      for (const field of node.fields) {
        if (typeof current !== "object" || current === null || !Object.hasOwn(current, field)) {
          throw new EvaluationError(`no such key: ${field}`);
        }
        current = (current as Record<string, unknown>)[field];
      }
      if (current === undefined) throw new EvaluationError("undefined value");
      return current;
    }
    case "not": {
      const value = evaluate(node.operand, vars);
      if (typeof value !== "boolean") throw new EvaluationError("! needs a bool");
      return !value;
    }
    case "binary":
      return evaluateBinary(node.op, node.left, node.right, vars);
  }
}

function tryEvaluate(
  node: Node,
  vars: ExpressionVars,
): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: evaluate(node, vars) };
  } catch (error) {
    return { ok: false, error };
  }
}

function evaluateBinary(op: BinaryOp, leftNode: Node, rightNode: Node, vars: ExpressionVars): unknown {
  if (op === "&&" || op === "||") {
    // CEL's logical operators are commutative over errors: `false && <error>` is false.
    const absorbing = op === "||";
    const left = tryEvaluate(leftNode, vars);
    if (left.ok && left.value === absorbing) return absorbing;
    const right = tryEvaluate(rightNode, vars);
    if (right.ok && right.value === absorbing) return absorbing;
    if (!left.ok) throw left.error;
    if (!right.ok) throw right.error;
    if (typeof left.value !== "boolean" || typeof right.value !== "boolean") {
      throw new EvaluationError(`${op} needs bools`);
    }
    return !absorbing;
  }
  const left = evaluate(leftNode, vars);
  const right = evaluate(rightNode, vars);
  if (op === "==") return valuesEqual(left, right);
  if (op === "!=") return !valuesEqual(left, right);
  const comparable =
    (typeof left === "number" && typeof right === "number") ||
    (typeof left === "string" && typeof right === "string");
  if (!comparable) throw new EvaluationError(`${op} needs two numbers or two strings`);
  const l = left as number | string;
  const r = right as number | string;
  switch (op) {
    case "<":
      return l < r;
    case "<=":
      return l <= r;
    case ">":
      return l > r;
    default:
      return l >= r;
  }
}

function valuesEqual(left: unknown, right: unknown): boolean {
  if (typeof left !== "object" || typeof right !== "object" || left === null || right === null)
    return left === right;
  return JSON.stringify(left) === JSON.stringify(right);
}

export function compileExpression(source: string): CompiledExpression {
  const node = new Parser(source, tokenize(source)).parse();
  return {
    source,
    value: (vars) => evaluate(node, vars),
    matches(vars) {
      try {
        return evaluate(node, vars) === true;
      } catch (error) {
        if (error instanceof EvaluationError) return false;
        throw error;
      }
    },
    key(vars) {
      try {
        const value = evaluate(node, vars);
        return typeof value === "string" ? value : JSON.stringify(value);
      } catch (error) {
        if (error instanceof EvaluationError) return undefined;
        throw error;
      }
    },
  };
}
