/**
 * Parses and validates the allowlist TOML: repeated `[[entry]]` tables with `source`, `id`,
 * `person_id` and optional `display_name`. Every problem is reported with the entry's index (1-based,
 * in file order) and field; unknown keys are errors too, so a typo never silently drops a person.
 * Pure: text in, allowlist or problems out.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { SOURCES, type Source } from "../core/envelope.ts";
import { normalizeSenderId } from "./normalize.ts";

export interface AllowlistEntry {
  source: Source;
  /** Normalised platform sender id. */
  id: string;
  person_id: string;
  display_name: string | null;
}

export interface Allowlist {
  entries: readonly AllowlistEntry[];
  /** Entry for a sender, comparing normalised ids. */
  lookup(source: Source, senderId: string): AllowlistEntry | null;
  /** person ids that appear in exactly one entry (logged as a warning). */
  singleUsePersons: readonly string[];
}

export type ParseResult = { ok: true; allowlist: Allowlist } | { ok: false; problems: string[] };

const ENTRY_KEYS = new Set(["source", "id", "person_id", "display_name"]);

export function parseAllowlist(text: string): ParseResult {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : "";
    return { ok: false, problems: [`not valid TOML${where}: ${firstLine(err)}`] };
  }
  const problems: string[] = [];
  for (const key of Object.keys(doc)) {
    if (key !== "entry") problems.push(`unknown top-level key "${key}" (only [[entry]] tables are read)`);
  }
  const raw = doc.entry ?? [];
  if (!Array.isArray(raw))
    return { ok: false, problems: [...problems, `"entry" must be written as [[entry]] tables`] };

  const entries: AllowlistEntry[] = [];
  const seen = new Map<string, number>();
  raw.forEach((item: unknown, i) => {
    const at = `entry ${i + 1}`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      problems.push(`${at}: must be a table`);
      return;
    }
    const e = item as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!ENTRY_KEYS.has(key))
        problems.push(`${at}: unknown field "${key}" (expected source, id, person_id, display_name)`);
    }
    const before = problems.length;
    const source = e.source;
    if (typeof source !== "string" || !(SOURCES as readonly string[]).includes(source)) {
      problems.push(`${at}: field "source" must be one of ${SOURCES.join(", ")}`);
    }
    for (const field of ["id", "person_id"] as const) {
      const v = e[field];
      if (typeof v !== "string" || v.trim() === "")
        problems.push(`${at}: field "${field}" must be a non-empty string`);
    }
    if (
      e.display_name !== undefined &&
      (typeof e.display_name !== "string" || e.display_name.trim() === "")
    ) {
      problems.push(`${at}: field "display_name" must be a non-empty string when present`);
    }
    if (problems.length > before) return;
    const entry: AllowlistEntry = {
      source: source as Source,
      id: normalizeSenderId(source as Source, e.id as string),
      person_id: (e.person_id as string).trim(),
      display_name: typeof e.display_name === "string" ? e.display_name.trim() : null,
    };
    const key = `${entry.source}\u0000${entry.id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push(`${at}: field "id" repeats entry ${first} (${entry.source} ${entry.id})`);
      return;
    }
    seen.set(key, i + 1);
    entries.push(entry);
  });
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, allowlist: buildAllowlist(entries) };
}

export function buildAllowlist(entries: readonly AllowlistEntry[]): Allowlist {
  const index = new Map(entries.map((e) => [`${e.source}\u0000${e.id}`, e]));
  const uses = new Map<string, number>();
  for (const e of entries) uses.set(e.person_id, (uses.get(e.person_id) ?? 0) + 1);
  return {
    entries,
    lookup: (source, senderId) => index.get(`${source}\u0000${normalizeSenderId(source, senderId)}`) ?? null,
    singleUsePersons: [...uses].filter(([, n]) => n === 1).map(([p]) => p),
  };
}

/** (person id, source) pairs: the identity links the store keeps. */
export function identityLinks(allowlist: Allowlist): { person_id: string; source: Source }[] {
  const pairs = new Map(allowlist.entries.map((e) => [`${e.person_id}\u0000${e.source}`, e]));
  return [...pairs.values()].map((e) => ({ person_id: e.person_id, source: e.source }));
}

function firstLine(err: unknown): string {
  return String(err instanceof Error ? err.message : err).split("\n")[0] ?? "";
}
