/**
 * Parses and validates the allowlist TOML: repeated `[[entry]]` tables with `source`, `id`,
 * `person_id`, optional `display_name` and, on `device_messenger` entries, optional `services` (which
 * Messages services the entry trusts; else the default, GW_DEVICE_TRUSTED_SERVICES). Every problem is
 * reported with the entry's index (1-based, in file order) and field; unknown keys are errors too, so a
 * typo never silently drops a person. Pure: text in, allowlist or problems out.
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { SOURCES, type Source } from "../core/envelope.ts";
import { normalizeSenderId } from "./normalize.ts";
import {
  DEFAULT_TRUSTED_SERVICES,
  DEVICE_SERVICES,
  type DeviceService,
  parseServices,
  trustsService,
} from "./services.ts";

export interface AllowlistEntry {
  source: Source;
  /** Normalised platform sender id. */
  id: string;
  person_id: string;
  display_name: string | null;
  /** The Messages services this entry trusts as written in the file; null: the default. */
  services?: readonly DeviceService[] | null;
}

export interface Allowlist {
  entries: readonly AllowlistEntry[];
  /** Entry for a sender, comparing normalised ids (who the id names, whatever the service). */
  lookup(source: Source, senderId: string): AllowlistEntry | null;
  /**
   * The entry that lets this message through: the sender's entry, and for `device_messenger` only when
   * the entry trusts the message's service (extensions.md §4). Null: quarantined like a stranger's.
   */
  admit(source: Source, senderId: string, service?: string | null): AllowlistEntry | null;
  /** The services an entry trusts: its own list, else the default. */
  servicesOf(entry: AllowlistEntry): readonly DeviceService[];
  /** What an entry without `services` trusts (GW_DEVICE_TRUSTED_SERVICES). */
  defaultServices: readonly DeviceService[];
  /** person ids that appear in exactly one entry (logged as a warning). */
  singleUsePersons: readonly string[];
}

export type ParseResult = { ok: true; allowlist: Allowlist } | { ok: false; problems: string[] };

const ENTRY_KEYS = new Set(["source", "id", "person_id", "display_name", "services"]);

export interface AllowlistOptions {
  /** What an entry without `services` trusts (GW_DEVICE_TRUSTED_SERVICES); default iMessage. */
  trustedServices?: readonly DeviceService[];
}

/** The `services` field of entry `at`: its list, null when absent, or a problem pushed. */
function servicesField(e: Record<string, unknown>, at: string, problems: string[]): DeviceService[] | null {
  if (e.services === undefined) return null;
  if (e.source !== "device_messenger") {
    problems.push(`${at}: field "services" applies only to device_messenger entries (iMessage, SMS, RCS)`);
    return null;
  }
  const parsed = Array.isArray(e.services) ? parseServices(e.services) : null;
  if (parsed?.ok) return parsed.services;
  problems.push(
    `${at}: field "services" must be a list of ${DEVICE_SERVICES.join(", ")}, e.g. services = ["iMessage", "SMS"]${parsed ? ` (${parsed.problem})` : ""}`,
  );
  return null;
}

export function parseAllowlist(text: string, options: AllowlistOptions = {}): ParseResult {
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
        problems.push(
          `${at}: unknown field "${key}" (expected source, id, person_id, display_name, services)`,
        );
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
    const services = servicesField(e, at, problems);
    if (problems.length > before) return;
    const entry: AllowlistEntry = {
      source: source as Source,
      id: normalizeSenderId(source as Source, e.id as string),
      person_id: (e.person_id as string).trim(),
      display_name: typeof e.display_name === "string" ? e.display_name.trim() : null,
      ...(services ? { services } : {}),
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
  return { ok: true, allowlist: buildAllowlist(entries, options) };
}

export function buildAllowlist(
  entries: readonly AllowlistEntry[],
  options: AllowlistOptions = {},
): Allowlist {
  const index = new Map(entries.map((e) => [`${e.source}\u0000${e.id}`, e]));
  const uses = new Map<string, number>();
  for (const e of entries) uses.set(e.person_id, (uses.get(e.person_id) ?? 0) + 1);
  const fallback = options.trustedServices ?? DEFAULT_TRUSTED_SERVICES;
  const lookup = (source: Source, senderId: string) =>
    index.get(`${source}\u0000${normalizeSenderId(source, senderId)}`) ?? null;
  const servicesOf = (e: AllowlistEntry) => e.services ?? fallback;
  return {
    entries,
    lookup,
    admit(source, senderId, service) {
      const entry = lookup(source, senderId);
      if (entry === null || source !== "device_messenger") return entry;
      return trustsService(servicesOf(entry), service) ? entry : null;
    },
    servicesOf,
    defaultServices: fallback,
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
