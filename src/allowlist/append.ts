/**
 * Adds one sender to the allowlist's TOML text (pure; `gw allow`): the new `[[entry]]` is appended
 * after everything already there, so comments, order and formatting of the rest are kept; the id is
 * written normalised; a sender already listed (same source and normalised id) is refused, and so is a
 * file that does not parse, since a broken file would stop `gw serve` at its next start.
 */
import type { Source } from "../core/envelope.ts";
import { normalizeSenderId } from "./normalize.ts";
import { type AllowlistEntry, parseAllowlist } from "./parse.ts";

export interface NewEntry {
  source: Source;
  id: string;
  personId: string;
  displayName: string | null;
}

export type AppendResult = { ok: true; text: string; entry: AllowlistEntry } | { ok: false; problem: string };

/** A TOML basic string (JSON's escapes are a subset TOML accepts). */
const tomlString = (s: string) => JSON.stringify(s);

export function appendEntry(text: string, e: NewEntry, note: string): AppendResult {
  const before = parseAllowlist(text);
  if (!before.ok)
    return { ok: false, problem: `the allowlist does not parse: ${before.problems.join("; ")}` };
  const id = normalizeSenderId(e.source, e.id);
  if (id === "") return { ok: false, problem: "the sender id is empty" };
  if (e.personId.trim() === "") return { ok: false, problem: "--person must not be empty" };
  const existing = before.allowlist.lookup(e.source, id);
  if (existing)
    return { ok: false, problem: `${e.source} ${id} is already allowed (person_id "${existing.person_id}")` };
  const lines = [
    `# ${note}`,
    "[[entry]]",
    `source = ${tomlString(e.source)}`,
    `id = ${tomlString(id)}`,
    `person_id = ${tomlString(e.personId.trim())}`,
    ...(e.displayName?.trim() ? [`display_name = ${tomlString(e.displayName.trim())}`] : []),
  ];
  const head =
    text === "" || text.endsWith("\n\n") ? text : text.endsWith("\n") ? `${text}\n` : `${text}\n\n`;
  const next = `${head}${lines.join("\n")}\n`;
  const after = parseAllowlist(next);
  if (!after.ok) return { ok: false, problem: `the new entry would not parse: ${after.problems.join("; ")}` };
  const entry = after.allowlist.lookup(e.source, id);
  return entry ? { ok: true, text: next, entry } : { ok: false, problem: "the new entry was not read back" };
}
