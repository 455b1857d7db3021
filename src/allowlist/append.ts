/**
 * Adds one sender to the allowlist's TOML text (pure; `gw allow`): the new `[[entry]]` is appended
 * after everything already there, so comments, order and formatting of the rest are kept; the id is
 * written normalised; a sender already listed (same source and normalised id) is refused, and so is a
 * file that does not parse, since a broken file would stop `gw serve` at its next start.
 */
import type { Source } from "../core/envelope.ts";
import { normalizeSenderId } from "./normalize.ts";
import { type AllowlistEntry, parseAllowlist } from "./parse.ts";
import type { DeviceService } from "./services.ts";

export interface NewEntry {
  source: Source;
  id: string;
  personId: string;
  displayName: string | null;
  /** The Messages services the entry trusts (device_messenger only); absent: the default. */
  services?: readonly DeviceService[];
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
    ...(e.services ? [`services = [${e.services.map(tomlString).join(", ")}]`] : []),
  ];
  const head =
    text === "" || text.endsWith("\n\n") ? text : text.endsWith("\n") ? `${text}\n` : `${text}\n\n`;
  const next = `${head}${lines.join("\n")}\n`;
  const after = parseAllowlist(next);
  if (!after.ok) return { ok: false, problem: `the new entry would not parse: ${after.problems.join("; ")}` };
  const entry = after.allowlist.lookup(e.source, id);
  return entry ? { ok: true, text: next, entry } : { ok: false, problem: "the new entry was not read back" };
}

const ENTRY_HEADER = /^\s*\[\[\s*entry\s*\]\]\s*(#.*)?$/;
const SERVICES_LINE = /^\s*services\s*=/;

/**
 * Sets the `services` of a sender already listed (pure; `gw allow … --services` on an allowed sender, e.g.
 * to trust their SMS): the entry's one-line `services = [...]` is replaced, or a new line added at the end
 * of its table; nothing else in the file changes, which is checked by parsing the result. `personId` must
 * be the entry's own. A `services` value written over several lines is refused (edit the file by hand).
 */
export function setServices(
  text: string,
  e: { source: Source; id: string; personId: string; services: readonly DeviceService[] },
): AppendResult {
  const before = parseAllowlist(text);
  if (!before.ok)
    return { ok: false, problem: `the allowlist does not parse: ${before.problems.join("; ")}` };
  const id = normalizeSenderId(e.source, e.id);
  const existing = before.allowlist.lookup(e.source, id);
  if (!existing) return { ok: false, problem: `${e.source} ${id} is not on the allowlist` };
  if (existing.person_id !== e.personId.trim())
    return {
      ok: false,
      problem: `${e.source} ${id} is already allowed as person "${existing.person_id}", not "${e.personId.trim()}"`,
    };
  const lines = text.split("\n");
  const headers = lines.flatMap((l, i) => (ENTRY_HEADER.test(l) ? [i] : []));
  const index = before.allowlist.entries.indexOf(existing);
  const start = headers[index];
  if (start === undefined) return { ok: false, problem: "the entry's table was not found in the file" };
  const end = headers[index + 1] ?? lines.length;
  const value = `services = [${e.services.map(tomlString).join(", ")}]`;
  const at = lines.slice(start, end).findIndex((l) => SERVICES_LINE.test(l));
  if (at >= 0) {
    const line = lines[start + at] as string;
    if (!line.includes("]"))
      return { ok: false, problem: `the entry's services are written over several lines: edit them by hand` };
    lines[start + at] = value;
  } else {
    let last = start;
    for (let i = start + 1; i < end; i++) if (/^\s*[A-Za-z_"]/.test(lines[i] as string)) last = i;
    lines.splice(last + 1, 0, value);
  }
  const next = lines.join("\n");
  const after = parseAllowlist(next);
  if (!after.ok)
    return { ok: false, problem: `the changed entry would not parse: ${after.problems.join("; ")}` };
  const entry = after.allowlist.lookup(e.source, id);
  const others = (l: readonly AllowlistEntry[]) =>
    JSON.stringify(l.filter((x) => x.id !== id || x.source !== e.source));
  const same =
    entry !== null &&
    JSON.stringify(entry.services) === JSON.stringify(e.services) &&
    entry.person_id === existing.person_id &&
    entry.display_name === existing.display_name &&
    others(after.allowlist.entries) === others(before.allowlist.entries);
  return same
    ? { ok: true, text: next, entry }
    : { ok: false, problem: "the entry could not be changed safely" };
}
