/**
 * Settings of the Discord connector (community_chat): the bot, its API, catch-up bounds and the queue bound.
 * Rows of the settings table (settings.ts), in the order the README and `gw --help` list them.
 */
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

export const DISCORD_SETTINGS = {
  communityBotToken: setting<string | null>({
    env: "GW_COMMUNITY_BOT_TOKEN",
    faces: ["serve"],
    doc: "Discord bot token. Unset = the community-chat connector is disabled.",
    defaultText: "unset",
    fallback: none,
    parse: p.text,
    secret: true,
  }),
  communityApiUrl: setting({
    env: "GW_COMMUNITY_API_URL",
    faces: ["serve"],
    doc: "Discord REST base (the client adds `/v10`); tests point it at a fake server.",
    defaultText: "`https://discord.com/api`",
    fallback: value("https://discord.com/api"),
    parse: p.httpUrl,
  }),
  communityCatchupMaxMessages: setting({
    env: "GW_COMMUNITY_CATCHUP_MAX_MESSAGES",
    faces: ["serve"],
    doc: "After every Discord (re)connect, at most this many missed messages are fetched per channel: the newest ones; how many were skipped is logged (0 = no catch-up).",
    defaultText: "`200`",
    fallback: value(200),
    parse: p.integer(0),
  }),
  communityCatchupMaxAgeHours: setting({
    env: "GW_COMMUNITY_CATCHUP_MAX_AGE_HOURS",
    faces: ["serve"],
    doc: "... and none older than this many hours (decimals allowed).",
    defaultText: "`24`",
    fallback: value(24),
    parse: p.positiveNumber,
  }),
  communityQueueMax: setting({
    env: "GW_COMMUNITY_QUEUE_MAX",
    faces: ["serve"],
    doc: "Discord messages held in memory while they cannot be stored (a failing disk); past it they are dropped and fetched again from Discord's history once storing works.",
    defaultText: "`1000`",
    fallback: value(1000),
    parse: p.integer(1),
  }),
  communityLoginTimeoutMs: setting({
    env: "GW_COMMUNITY_LOGIN_TIMEOUT_MS",
    faces: ["serve"],
    doc: "A Discord login that has not reached READY by then is abandoned and retried with backoff (health says why).",
    defaultText: "`30000`",
    fallback: value(30_000),
    parse: p.integer(1),
  }),
};
