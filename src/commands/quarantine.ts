/**
 * `gw quarantine [--source <source>] [--limit N] [--json]`: who wrote but is not on the allowlist, most
 * recent first, with how many messages, the first and last time, and a preview of the newest one, plus
 * the `gw allow` line that lets each one through. Reads the state database on this machine (read-only;
 * a database that does not exist yet is not created). Names and previews are strangers' text: control
 * characters and bidirectional overrides are removed before they reach the terminal.
 */
import { existsSync, readFileSync } from "node:fs";
import { type Allowlist, buildAllowlist, parseAllowlist } from "../allowlist/parse.ts";
import {
  DEFAULT_TRUSTED_SERVICES,
  type DeviceService,
  deviceService,
  FORGEABLE_SERVICES,
  serviceOf,
  trustsService,
} from "../allowlist/services.ts";
import type { Config } from "../config/settings.ts";
import { readContactBook } from "../contacts/reader.ts";
import { SOURCES, type Source } from "../core/envelope.ts";
import { formatTimestamp } from "../core/time.ts";
import type { QuarantinedSender } from "../store/messages.ts";
import { optionOf } from "./args.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_OK } from "./exit.ts";
import { configOf, readStore } from "./setup.ts";

const USAGE = "usage: gw quarantine [--source device_messenger|community_chat] [--limit N] [--json]";
const PREVIEW_CHARS = 60;

/** Text safe to print on a terminal: one line, no control characters or direction overrides. Pure. */
export function terminalSafe(text: string, max = Number.POSITIVE_INFINITY): string {
  const clean = text
    .replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

const quoted = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * A person id to suggest for a stranger (pure): their name as a slug ("Free Nitro 🎁" → free-nitro), else
 * `person-` and the last characters of their id. Never a shell metacharacter: the line is pasted as printed.
 */
export function suggestedPerson(s: Pick<QuarantinedSender, "sender_id" | "sender_name">): string {
  const slug = s.sender_name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 32);
  if (slug !== "" && !/^\d[\d-]*$/.test(slug)) return slug;
  return `person-${
    s.sender_id
      .replace(/[^A-Za-z0-9]/g, "")
      .slice(-4)
      .toLowerCase() || "new"
  }`;
}

/**
 * Why a sender's messages are held, and the `gw allow` line that lets them through (null: nothing to allow):
 * not on the allowlist; on it, but over a service its entry does not trust (SMS, RCS: forgeable sender ids);
 * or allowed since (stored messages keep their status). Pure.
 */
function whyHeld(s: QuarantinedSender, allowlist: Allowlist | null): { why: string; allow: string | null } {
  const entry = allowlist?.lookup(s.source, s.sender_id) ?? null;
  const trusted = entry
    ? (allowlist?.servicesOf(entry) ?? [])
    : (allowlist?.defaultServices ?? DEFAULT_TRUSTED_SERVICES);
  const held = s.services.map((x) => serviceOf(x) ?? x);
  const untrusted = s.source === "device_messenger" ? held.filter((x) => !trustsService(trusted, x)) : [];
  const listable = untrusted.filter((x): x is DeviceService => deviceService(x) !== null);
  const never = untrusted.filter((x) => deviceService(x) === null);
  const services = [...new Set([...trusted, ...listable])];
  const servicesFlag = listable.length > 0 ? ` --services ${services.join(",")}` : "";
  const forged = listable.some((x) => FORGEABLE_SERVICES.includes(x))
    ? "  # SMS and RCS sender ids can be forged: trust them only if you accept that"
    : "";
  const neverNote = never.length > 0 ? `; ${never.join(", ")} can never be trusted` : "";
  if (!entry)
    return {
      why: `not on the allowlist${neverNote}`,
      allow: `gw allow ${s.source} ${quoted(s.sender_id)} --person ${suggestedPerson(s)}${servicesFlag}${forged}`,
    };
  if (untrusted.length === 0)
    return {
      why: `allowed since as person ${entry.person_id} (stored messages keep their status)`,
      allow: null,
    };
  return {
    why: `allowlisted as person ${entry.person_id}, but over ${untrusted.join(", ")}, which the entry does not trust${neverNote}`,
    allow:
      listable.length > 0
        ? `gw allow ${s.source} ${quoted(s.sender_id)} --person ${quoted(entry.person_id)}${servicesFlag}${forged}`
        : null,
  };
}

export function quarantineLines(
  senders: readonly QuarantinedSender[],
  allowlist: Allowlist | null = null,
  /** The owner's Contacts name for an iMessage handle (shown beside it), or null. */
  nameOf: (handle: string) => string | null = () => null,
): string[] {
  if (senders.length === 0) return ["No quarantined senders."];
  const lines: string[] = [];
  for (const source of SOURCES) {
    const mine = senders.filter((s) => s.source === source);
    if (mine.length === 0) continue;
    lines.push(`${source}:`);
    for (const s of mine) {
      const known = s.source === "device_messenger" ? nameOf(s.sender_id) : null;
      const name = terminalSafe(known ?? s.sender_name, 40);
      const over =
        s.services.length > 0 ? ` over ${s.services.map((x) => terminalSafe(x, 20)).join(", ")}` : "";
      const held = whyHeld(known ? { ...s, sender_name: known } : s, allowlist);
      lines.push(
        `  ${terminalSafe(s.sender_id)}${name && name !== s.sender_id ? ` (${name})` : ""}: ${s.count} message${s.count === 1 ? "" : "s"}${over}, first ${formatTimestamp(s.first_ts)}, last ${formatTimestamp(s.last_ts)}`,
        `    why: ${terminalSafe(held.why)}`,
        `    last: "${terminalSafe(s.last_text, PREVIEW_CHARS)}"`,
        ...(held.allow ? [`    allow: ${held.allow}`] : []),
      );
    }
  }
  return lines;
}

/** The owner's Contacts names (when Contacts is on), read once: the name beside a stranger's number. */
function contactNames(config: Config): (handle: string) => string | null {
  if (!config.contactsOn) return () => null;
  const { book } = readContactBook(config.contactsDir, { defaultRegion: config.defaultRegion });
  return (handle) => book.nameOf(handle);
}

/** The allowlist as gw serve reads it (none: an empty one), or null when it does not parse. */
function readAllowlist(config: Config): Allowlist | null {
  const options = { trustedServices: config.deviceTrustedServices };
  if (!existsSync(config.allowlistPath)) return buildAllowlist([], options);
  const parsed = parseAllowlist(readFileSync(config.allowlistPath, "utf8"), options);
  return parsed.ok ? parsed.allowlist : null;
}

export async function quarantine(ctx: CommandContext): Promise<number> {
  const source = optionOf(ctx.argv, "--source");
  if (source !== undefined && !(SOURCES as readonly string[]).includes(source))
    throw new CommandError(USAGE, EXIT_CONFIG);
  const limit = Number(optionOf(ctx.argv, "--limit") ?? "20");
  if (!Number.isInteger(limit) || limit < 1) throw new CommandError(USAGE, EXIT_CONFIG);
  const config = configOf(ctx, { required: [] });
  const { dbPath } = config;
  let senders: QuarantinedSender[] = [];
  const store = readStore(dbPath);
  if (store) {
    try {
      senders = store.messages.quarantinedSenders(limit, (source as Source | undefined) ?? null);
    } finally {
      store.close();
    }
  }
  ctx.stdout.write(
    ctx.argv.includes("--json")
      ? `${JSON.stringify({ senders: senders.map((s) => ({ ...s, first_seen: formatTimestamp(s.first_ts), last_seen: formatTimestamp(s.last_ts) })) }, null, 2)}\n`
      : `${quarantineLines(senders, readAllowlist(config), contactNames(config)).join("\n")}\n`,
  );
  return EXIT_OK;
}
