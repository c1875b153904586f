import { stripeErrors } from "./errors";

/**
 * Stripe's request encoding: application/x-www-form-urlencoded with bracket notation
 * (`line_items[0][price_data][unit_amount]=500`, `expand[]=payment_intent`). Values stay strings,
 * as on the wire; each endpoint coerces the fields it knows, as Stripe does.
 */
export type ParamValue = string | ParamValue[] | Params;
export interface Params {
  [key: string]: ParamValue;
}

const keyPattern = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;

function splitKey(rawKey: string): string[] {
  const match = keyPattern.exec(rawKey);
  if (!match) return [rawKey];
  const [, head = rawKey, brackets = ""] = match;
  const rest = brackets === "" ? [] : brackets.slice(1, -1).split("][");
  return [head, ...rest];
}

function isParams(value: ParamValue | undefined): value is Params {
  return typeof value === "object" && !Array.isArray(value);
}

function assign(root: Params, path: string[], value: string, rawKey: string): void {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i] === "" ? String(Object.keys(node).length) : (path[i] as string);
    const existing = node[segment];
    if (existing === undefined) node[segment] = {};
    else if (!isParams(existing)) {
      throw stripeErrors.invalidParam(rawKey, `Invalid object: ${rawKey} mixes a value and nested fields.`);
    }
    node = node[segment] as Params;
  }
  const last = path[path.length - 1] as string;
  const leaf = last === "" ? String(Object.keys(node).length) : last;
  if (isParams(node[leaf])) {
    throw stripeErrors.invalidParam(rawKey, `Invalid object: ${rawKey} mixes a value and nested fields.`);
  }
  node[leaf] = value;
}

/** Hashes whose keys are exactly 0..n-1 were arrays on the client; metadata keys stay a hash. */
function restoreArrays(value: ParamValue, parentKey: string): ParamValue {
  if (!isParams(value)) return value;
  const keys = Object.keys(value);
  const converted: Params = {};
  for (const key of keys) converted[key] = restoreArrays(value[key] as ParamValue, key);
  const indexed =
    keys.length > 0 && [...keys].sort((a, b) => Number(a) - Number(b)).every((key, i) => key === String(i));
  if (parentKey !== "metadata" && indexed) {
    return keys.map((_, i) => converted[String(i)] as ParamValue);
  }
  return converted;
}

export function parseStripeParams(encoded: string): Params {
  const root: Params = {};
  for (const [rawKey, value] of new URLSearchParams(encoded)) {
    assign(root, splitKey(rawKey), value, rawKey);
  }
  return restoreArrays(root, "") as Params;
}

/** Accessors that answer with Stripe's own validation errors. */
export function optionalString(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw stripeErrors.invalidParam(name, `Invalid string: ${name}`);
  return value;
}

export function requiredString(params: Params, name: string, label = name): string {
  const value = optionalString(params, name);
  if (value === undefined) throw stripeErrors.missingParam(label);
  return value;
}

export function optionalInteger(params: Params, name: string, label = name): number | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) {
    throw stripeErrors.invalidParam(label, `Invalid integer: ${value}`, "parameter_invalid_integer");
  }
  return Number(value);
}

export function optionalHash(params: Params, name: string): Params | undefined {
  const value = params[name];
  if (value === undefined || value === "") return undefined;
  if (!isParams(value)) throw stripeErrors.invalidParam(name, `Invalid hash: ${name}`);
  return value;
}

export function optionalList(params: Params, name: string): ParamValue[] | undefined {
  const value = params[name];
  if (value === undefined || value === "") return undefined;
  if (typeof value === "string") return [value];
  if (!Array.isArray(value)) throw stripeErrors.invalidParam(name, `Invalid array: ${name}`);
  return value;
}

export function stringMap(params: Params, name: string): Record<string, string> {
  const hash = optionalHash(params, name) ?? {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(hash)) {
    if (typeof value !== "string")
      throw stripeErrors.invalidParam(`${name}[${key}]`, `Invalid string: ${name}[${key}]`);
    out[key] = value;
  }
  return out;
}
