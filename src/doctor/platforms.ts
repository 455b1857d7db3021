/**
 * `gw doctor`'s checks of the two platforms (runner): chat.db readable (Full Disk Access; the line names
 * the macOS release its columns point to, release.ts) and Messages scriptable (Automation: asking
 * Messages for its name makes macOS show the prompt if it was never answered); the Discord bot token
 * and its Message Content intent (community-chat/probe.ts, one REST round trip, no gateway login).
 */
import { existsSync } from "node:fs";
import type { Config } from "../config/settings.ts";
import { probeDiscord } from "../connectors/community-chat/probe.ts";
import { ChatDbUnavailable, openChatDb } from "../connectors/device-messenger/chat-db.ts";
import { describeSchema } from "../connectors/device-messenger/release.ts";
import type { Spawner } from "../core/ports.ts";
import { type Check, fail, ok } from "./check.ts";

const FULL_DISK_ACCESS =
  "System Settings → Privacy & Security → Full Disk Access: add the program that starts gw (your terminal, or the gw binary when it runs as a login service), then restart it";

export async function imessageChecks(
  config: Config,
  host: { platform: NodeJS.Platform; path: string },
  spawner: Spawner,
): Promise<Check[]> {
  if (!config.deviceMessengerOn)
    return [ok("imessage", "iMessage is off on this system (set GW_CHAT_DB_PATH to read a chat.db)")];
  const checks: Check[] = [];
  try {
    const db = openChatDb(config.chatDbPath);
    const max = db.maxRowid();
    const schema = describeSchema(db.columns.message);
    db.close();
    checks.push(ok("chat-db", `chat.db readable at ${config.chatDbPath} (${schema}; last ROWID ${max})`));
  } catch (err) {
    checks.push(
      fail(
        "chat-db",
        err instanceof ChatDbUnavailable ? err.message : String(err),
        "without it no iMessage reaches gw",
        FULL_DISK_ACCESS,
      ),
    );
  }
  if (!existsSync(config.osascriptPath)) {
    checks.push(
      fail(
        "automation",
        `GW_OSASCRIPT_PATH ${config.osascriptPath} does not exist`,
        "iMessage sends would fail",
        "point GW_OSASCRIPT_PATH at osascript (/usr/bin/osascript)",
      ),
    );
  } else if (host.platform === "darwin") {
    const r = await spawner.run([config.osascriptPath, "-"], {
      stdin: 'tell application "Messages" to get name\n',
      timeoutMs: 30_000,
      env: { PATH: host.path },
    });
    checks.push(
      r.exitCode === 0
        ? ok("automation", "gw may control Messages (Automation)")
        : fail(
            "automation",
            `Messages refused Apple events: ${r.stderr.trim() || "no answer"}`,
            "iMessage sends would fail with 502 PLATFORM_AUTH",
            "System Settings → Privacy & Security → Automation: allow Messages for the program that runs gw, or run `tccutil reset AppleEvents` and try again",
          ),
    );
  }
  return checks;
}

export async function discordChecks(config: Config, fetcher: typeof fetch): Promise<Check[]> {
  if (!config.communityBotToken)
    return [ok("discord", "Discord is off (set GW_COMMUNITY_BOT_TOKEN to connect a bot)")];
  const lines = await probeDiscord(config.communityApiUrl, config.communityBotToken, fetcher);
  return lines.map((l, i) =>
    l.ok
      ? ok(i === 0 ? "discord-token" : "discord-intent", l.what)
      : fail(
          l.what.includes("intent") ? "discord-intent" : "discord-token",
          l.what,
          "no Discord message reaches gw",
          l.fix ?? "",
        ),
  );
}
