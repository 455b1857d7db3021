/**
 * `gw doctor`'s checks of local files (runner, read-only): the state database and its modes, what the
 * iMessage reader kept with its cursor (rows held back as iCloud backfill, messages waiting for
 * attachments), and the allowlist. Nothing is created or written.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { parseAllowlist } from "../allowlist/parse.ts";
import { FORGEABLE_SERVICES } from "../allowlist/services.ts";
import type { Config } from "../config/settings.ts";
import { parseReaderState } from "../connectors/device-messenger/reader-state.ts";
import { openStoreReadOnly } from "../store/store.ts";
import { type Check, fail, ok, warn } from "./check.ts";

const mode = (p: string) => statSync(p).mode & 0o777;

export function stateChecks(config: Config): Check[] {
  if (!existsSync(config.dbPath))
    return [ok("state", `state database ${config.dbPath} will be created on first start`)];
  const dataDir = dirname(config.dbPath);
  const loose = [
    [dataDir, 0o700],
    [config.dbPath, 0o600],
  ].filter(([p, want]) => mode(p as string) !== want);
  const files =
    loose.length === 0
      ? ok("state", `state database ${config.dbPath} (0600, folder 0700)`)
      : fail(
          "state",
          `state files are readable by others: ${loose.map(([p]) => p).join(", ")}`,
          "they hold your messages",
          `chmod 700 "${dataDir}" && chmod 600 "${config.dbPath}"*`,
        );
  return [files, ...readerNotes(config.dbPath)];
}

/** What the iMessage reader kept with its cursor: rows fenced as iCloud backfill, messages still waiting. */
function readerNotes(dbPath: string): Check[] {
  let text: string | null = null;
  try {
    const store = openStoreReadOnly(dbPath);
    try {
      text = store?.cursors.get("device_messenger")?.state ?? null;
    } finally {
      store?.close();
    }
  } catch (err) {
    return [
      warn(
        "state-read",
        `cannot read the state database: ${(err as Error).message}`,
        "the iMessage reader's notes (backfill held back, attachments waiting) are not shown",
        "run gw doctor again; if it persists, check the file with `gw serve` running",
      ),
    ];
  }
  const state = parseReaderState(text);
  const notes: Check[] = [];
  if (state.fenced > 0)
    notes.push(
      ok(
        "imessage-backfill",
        `iMessage: ${state.fenced} old row(s) re-inserted by iCloud were held back, not delivered (last at ${new Date(state.fencedLastAt ?? 0).toISOString()}; GW_DEVICE_BACKFILL_FENCE_MINUTES)`,
      ),
    );
  if (state.pending.length > 0)
    notes.push(
      ok(
        "imessage-pending",
        `iMessage: ${state.pending.length} message(s) waiting for attachments still downloading`,
      ),
    );
  return notes;
}

/** The allowlist file, then one warning per iMessage entry that trusts SMS or RCS (forgeable sender ids). */
export function allowlistChecks(config: Config): Check[] {
  if (!existsSync(config.allowlistPath))
    return [
      warn(
        "allowlist",
        `no allowlist at ${config.allowlistPath}`,
        "every sender is quarantined, so no agent sees a message",
        "allow senders with `gw allow <source> <sender id> --person <id>` (or write [[entry]] tables, see the README)",
      ),
    ];
  const parsed = parseAllowlist(readFileSync(config.allowlistPath, "utf8"), {
    trustedServices: config.deviceTrustedServices,
  });
  if (!parsed.ok)
    return [
      fail(
        "allowlist",
        `allowlist ${config.allowlistPath} is invalid: ${parsed.problems.join("; ")}`,
        "gw serve refuses to start with it (exit 2)",
        "correct the file",
      ),
    ];
  const { allowlist } = parsed;
  const n = allowlist.entries.length;
  const file =
    n === 0
      ? warn(
          "allowlist",
          `allowlist ${config.allowlistPath} has no entries`,
          "every sender is quarantined",
          "allow senders with `gw allow`, or see `gw quarantine` for who wrote",
        )
      : ok("allowlist", `allowlist ${config.allowlistPath}: ${n} entries`);
  const forgeable = allowlist.entries.flatMap((e) => {
    const services = e.source === "device_messenger" ? allowlist.servicesOf(e) : [];
    const weak = services.filter((s) => FORGEABLE_SERVICES.includes(s));
    if (weak.length === 0) return [];
    const own = e.services != null;
    return [
      warn(
        "allowlist-services",
        `allowlist entry ${e.id} (person ${e.person_id}) trusts ${weak.join(" and ")}${own ? "" : " (GW_DEVICE_TRUSTED_SERVICES)"}`,
        `${weak.join(" and ")} sender ids can be forged: anyone who knows this number can write to your agents as this person`,
        own
          ? `write services = ["iMessage"] on this entry in ${config.allowlistPath} unless you accept that`
          : "unset GW_DEVICE_TRUSTED_SERVICES (iMessage only) unless you accept that",
      ),
    ];
  });
  return [file, ...forgeable];
}
