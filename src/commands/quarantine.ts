/**
 * `gw quarantine [--source <source>] [--limit N] [--json]`: who wrote but is not on the allowlist, most
 * recent first, with how many messages, the first and last time, and a preview of the newest one, plus
 * the `gw allow` line that lets each one through. Reads the state database on this machine (read-only;
 * a database that does not exist yet is not created). Names and previews are strangers' text: control
 * characters and bidirectional overrides are removed before they reach the terminal.
 */
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

export function quarantineLines(senders: readonly QuarantinedSender[]): string[] {
  if (senders.length === 0) return ["No quarantined senders."];
  const lines: string[] = [];
  for (const source of SOURCES) {
    const mine = senders.filter((s) => s.source === source);
    if (mine.length === 0) continue;
    lines.push(`${source}:`);
    for (const s of mine) {
      const name = terminalSafe(s.sender_name, 40);
      lines.push(
        `  ${terminalSafe(s.sender_id)}${name && name !== s.sender_id ? ` (${name})` : ""}: ${s.count} message${s.count === 1 ? "" : "s"}, first ${formatTimestamp(s.first_ts)}, last ${formatTimestamp(s.last_ts)}`,
        `    last: "${terminalSafe(s.last_text, PREVIEW_CHARS)}"`,
        `    allow: gw allow ${source} '${s.sender_id.replaceAll("'", "'\\''")}' --person <name>`,
      );
    }
  }
  return lines;
}

export async function quarantine(ctx: CommandContext): Promise<number> {
  const source = optionOf(ctx.argv, "--source");
  if (source !== undefined && !(SOURCES as readonly string[]).includes(source))
    throw new CommandError(USAGE, EXIT_CONFIG);
  const limit = Number(optionOf(ctx.argv, "--limit") ?? "20");
  if (!Number.isInteger(limit) || limit < 1) throw new CommandError(USAGE, EXIT_CONFIG);
  const { dbPath } = configOf(ctx, { required: [] });
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
      : `${quarantineLines(senders).join("\n")}\n`,
  );
  return EXIT_OK;
}
