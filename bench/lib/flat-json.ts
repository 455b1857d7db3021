/**
 * bench/run.ts stores each report with `JSON.stringify(report, null, 2)`, which puts every element of an
 * array on its own line, while biome (bun run lint) formats an array of numbers or strings on one line.
 * A report whose `results` hold such arrays would fail the lint once stored, so they are written as one
 * string, elements joined by ", " (an empty array stays an empty array). Pure.
 */
export function flatArrays(value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => v === null || typeof v !== "object"))
      return value.map((v) => (v === null ? "null" : String(v))).join(", ");
    return value.map(flatArrays);
  }
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, flatArrays(v)]));
  return value;
}
