/** Narrows away null/undefined, failing the test with a message instead of a TypeError later. */
export function defined<T>(value: T | null | undefined, what = "value"): T {
  if (value === null || value === undefined) throw new Error(`expected a ${what}`);
  return value;
}
