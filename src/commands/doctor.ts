/**
 * `gw doctor`: checks what `gw serve` needs and says what to fix, one line per check. Never writes:
 * the state database is inspected, not created; chat.db is opened read-only. On macOS it also asks
 * Messages for its name, which makes macOS show the Automation prompt if it was never answered. With a
 * Discord token it asks Discord whether the token is accepted and the Message Content intent enabled.
 * Exit 0 when every check passes, 1 otherwise, 2 when the configuration itself does not parse.
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { parseAllowlist } from "../allowlist/parse.ts";
import { probeDiscord } from "../connectors/community-chat/probe.ts";
import { ChatDbUnavailable, openChatDb } from "../connectors/device-messenger/chat-db.ts";
import { parseReaderState } from "../connectors/device-messenger/poller.ts";
import { bunSpawner } from "../core/spawn.ts";
import { type CommandContext, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { configOf } from "./setup.ts";

type Check = { ok: boolean; what: string; fix?: string };

const mode = (p: string) => statSync(p).mode & 0o777;

export async function doctor(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx);
  const checks: Check[] = [{ ok: true, what: "configuration parses and GW_BEARER_TOKEN is set" }];

  const dataDir = dirname(config.dbPath);
  if (!existsSync(config.dbPath)) {
    checks.push({ ok: true, what: `state database ${config.dbPath} will be created on first start` });
  } else {
    const loose = [
      [dataDir, 0o700],
      [config.dbPath, 0o600],
    ].filter(([p, want]) => mode(p as string) !== want);
    checks.push(
      loose.length === 0
        ? { ok: true, what: `state database ${config.dbPath} (0600, folder 0700)` }
        : {
            ok: false,
            what: `state files are readable by others: ${loose.map(([p]) => p).join(", ")}`,
            fix: `chmod 700 "${dataDir}" && chmod 600 "${config.dbPath}"*`,
          },
    );
  }

  if (existsSync(config.dbPath)) checks.push(...readerNotes(config.dbPath));

  if (!existsSync(config.allowlistPath)) {
    checks.push({
      ok: false,
      what: `no allowlist at ${config.allowlistPath}: every sender is quarantined`,
      fix: "create it with [[entry]] tables (see the README), then send SIGHUP to gw serve",
    });
  } else {
    const parsed = parseAllowlist(readFileSync(config.allowlistPath, "utf8"));
    checks.push(
      parsed.ok
        ? { ok: true, what: `allowlist ${config.allowlistPath}: ${parsed.allowlist.entries.length} entries` }
        : {
            ok: false,
            what: `allowlist ${config.allowlistPath} is invalid: ${parsed.problems.join("; ")}`,
            fix: "correct the file",
          },
    );
  }

  const imessage = ctx.platform === "darwin" || ctx.env.GW_CHAT_DB_PATH !== undefined;
  if (!imessage) {
    checks.push({ ok: true, what: "iMessage is off on this system (set GW_CHAT_DB_PATH to read a chat.db)" });
  } else {
    try {
      const db = openChatDb(config.chatDbPath);
      const max = db.maxRowid();
      db.close();
      checks.push({ ok: true, what: `chat.db readable at ${config.chatDbPath} (last ROWID ${max})` });
    } catch (err) {
      checks.push({
        ok: false,
        what: err instanceof ChatDbUnavailable ? err.message : String(err),
        fix: "System Settings → Privacy & Security → Full Disk Access: add the app that runs gw, then restart it",
      });
    }
    if (!existsSync(config.osascriptPath)) {
      checks.push({
        ok: false,
        what: `GW_OSASCRIPT_PATH ${config.osascriptPath} does not exist`,
        fix: "point it at osascript",
      });
    } else if (ctx.platform === "darwin") {
      const r = await bunSpawner.run([config.osascriptPath, "-"], {
        stdin: 'tell application "Messages" to get name\n',
        timeoutMs: 30_000,
        env: { PATH: ctx.env.PATH ?? "/usr/bin:/bin" },
      });
      checks.push(
        r.exitCode === 0
          ? { ok: true, what: "gw may control Messages (Automation)" }
          : {
              ok: false,
              what: `Messages refused Apple events: ${r.stderr.trim() || "no answer"}`,
              fix: "System Settings → Privacy & Security → Automation: allow Messages for the app that runs gw, or run `tccutil reset AppleEvents` and try again",
            },
      );
    }
  }

  if (!config.communityBotToken)
    checks.push({ ok: true, what: "Discord is off (set GW_COMMUNITY_BOT_TOKEN to connect a bot)" });
  else checks.push(...(await probeDiscord(config.communityApiUrl, config.communityBotToken, fetch)));

  if (config.webhookUrl) checks.push({ ok: true, what: `webhooks go to ${config.webhookUrl}, signed` });
  checks.push(await portCheck(config.bindHost, config.bindPort));

  for (const c of checks)
    ctx.stdout.write(`${c.ok ? "ok  " : "FIX "} ${c.what}${c.fix ? `\n     → ${c.fix}` : ""}\n`);
  return checks.every((c) => c.ok) ? EXIT_OK : EXIT_FAILURE;
}

async function portCheck(host: string, port: number): Promise<Check> {
  try {
    const server = Bun.serve({ hostname: host, port, reusePort: false, fetch: () => new Response() });
    server.stop(true);
    return { ok: true, what: `port ${host}:${port} is free for gw serve` };
  } catch {
    try {
      const res = await fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}/healthz`, {
        signal: AbortSignal.timeout(2000),
      });
      const body = (await res.json()) as { status?: string; version?: string };
      return {
        ok: true,
        what: `gw ${body.version ?? ""} is already serving on ${host}:${port} (status ${body.status})`,
      };
    } catch {
      return {
        ok: false,
        what: `port ${host}:${port} is taken by another program`,
        fix: "set GW_BIND_PORT to a free port",
      };
    }
  }
}

/** What the iMessage reader kept with its cursor: rows fenced as iCloud backfill, messages still waiting. */
function readerNotes(dbPath: string): Check[] {
  let text: string | null = null;
  try {
    const db = new Database(dbPath, { readonly: true });
    try {
      const row = db.query("SELECT state FROM connector_cursors WHERE source = 'device_messenger'").get() as {
        state: string | null;
      } | null;
      text = row?.state ?? null;
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
  const state = parseReaderState(text);
  const notes: Check[] = [];
  if (state.fenced > 0)
    notes.push({
      ok: true,
      what: `iMessage: ${state.fenced} old row(s) re-inserted by iCloud were held back, not delivered (last at ${new Date(state.fencedLastAt ?? 0).toISOString()}; GW_DEVICE_BACKFILL_FENCE_MINUTES)`,
    });
  if (state.pending.length > 0)
    notes.push({
      ok: true,
      what: `iMessage: ${state.pending.length} message(s) waiting for attachments still downloading`,
    });
  return notes;
}
