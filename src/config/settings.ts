/**
 * Every setting gw reads: the spec's table plus decisions.md, one row each. The row names the
 * variable, what it does, which faces use it, its default and its parser. Config (the parsed
 * result) is derived from this table, so adding a row adds a typed field.
 */
import { join } from "node:path";
import type { DeviceService } from "../allowlist/services.ts";
import { EVENT_KINDS } from "../core/event.ts";
import * as p from "./parsers.ts";
import type { DefaultDirs, HostInfo } from "./paths.ts";

type Face = "serve" | "receiver" | "mcp" | "service";

/** What a webhook can push: the message (the spec's delivery), or one of the event kinds. */
export const WEBHOOK_KINDS = ["message", ...EVENT_KINDS] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

interface Setting<T> {
  env: `GW_${string}`;
  faces: readonly Face[];
  doc: string;
  /** How the default reads in the README. */
  defaultText: string;
  fallback: (dirs: DefaultDirs, host: HostInfo) => T;
  parse: p.Parser<T>;
  /** Never printed: redacted in logs and in `gw doctor`. */
  secret?: boolean;
}

const setting = <T>(s: Setting<T>) => s;
const none = () => null;
const value =
  <T>(v: T) =>
  () =>
    v;

export const SETTINGS = {
  bearerToken: setting<string | null>({
    env: "GW_BEARER_TOKEN",
    faces: ["serve", "receiver", "mcp"],
    doc: "Bearer token every HTTP route requires. Required; use ≥ 32 random bytes (`openssl rand -hex 32`).",
    defaultText: "required",
    fallback: none,
    parse: p.text,
    secret: true,
  }),
  bindHost: setting({
    env: "GW_BIND_HOST",
    faces: ["serve"],
    doc: "Address the service listens on.",
    defaultText: "`127.0.0.1`",
    fallback: value("127.0.0.1"),
    parse: p.hostName,
  }),
  bindPort: setting({
    env: "GW_BIND_PORT",
    faces: ["serve"],
    doc: "Port the service listens on (0 picks a free one and logs it).",
    defaultText: "`8080`",
    fallback: value(8080),
    parse: p.port,
  }),
  dbPath: setting({
    env: "GW_DB_PATH",
    faces: ["serve"],
    doc: "State database (SQLite, created 0600).",
    defaultText: "`<data dir>/gw.db`",
    fallback: (d) => join(d.dataDir, "gw.db"),
    parse: p.path,
  }),
  attachmentDir: setting({
    env: "GW_ATTACHMENT_DIR",
    faces: ["serve"],
    doc: "Directory of re-hosted attachment bytes (0700).",
    defaultText: "`<data dir>/attachments`",
    fallback: (d) => join(d.dataDir, "attachments"),
    parse: p.path,
  }),
  logDir: setting({
    env: "GW_LOG_DIR",
    faces: ["serve", "receiver", "mcp"],
    doc: "Directory of the JSON log files: `gw.<date>.<n>.log` (serve; `current.log` points at the newest), `receiver.*`, `mcp.*`; a new file each day, 14 kept.",
    defaultText: "`~/Library/Logs/gw` on macOS, else `~/.local/state/gw/logs`",
    fallback: (d) => d.logDir,
    parse: p.path,
  }),
  logLevel: setting({
    env: "GW_LOG_LEVEL",
    faces: ["serve", "receiver", "mcp"],
    doc: "Log level: trace, debug, info, warn, error. Message text is logged only at debug.",
    defaultText: "`info`",
    fallback: value("info" as const),
    parse: p.oneOf(["trace", "debug", "info", "warn", "error"] as const),
  }),
  logStderrLevel: setting({
    env: "GW_LOG_STDERR_LEVEL",
    faces: ["serve", "receiver", "mcp"],
    doc: "The least level also written to stderr (the files get everything GW_LOG_LEVEL lets through); `silent` writes nothing there. The login service sets `error`, so launchd's never-rotated log holds only errors.",
    defaultText: "`trace`",
    fallback: value("trace" as const),
    parse: p.oneOf(["trace", "debug", "info", "warn", "error", "silent"] as const),
  }),
  allowlistPath: setting({
    env: "GW_ALLOWLIST_PATH",
    faces: ["serve"],
    doc: "Allowlist TOML file; reloaded on SIGHUP. Missing = everyone quarantined.",
    defaultText: "`<config dir>/allowlist.toml`",
    fallback: (d) => join(d.configDir, "allowlist.toml"),
    parse: p.path,
  }),
  webhookUrl: setting<string | null>({
    env: "GW_WEBHOOK_URL",
    faces: ["serve"],
    doc: "Target of signed webhooks for allowlisted inbound messages. Unset = no webhooks.",
    defaultText: "unset",
    fallback: none,
    parse: p.httpUrl,
  }),
  webhookSecret: setting<string | null>({
    env: "GW_WEBHOOK_SECRET",
    faces: ["serve", "receiver"],
    doc: "HMAC-SHA256 secret shared by service and receiver. Required with GW_WEBHOOK_URL and for the receiver.",
    defaultText: "unset",
    fallback: none,
    parse: p.text,
    secret: true,
  }),
  webhookRetryDelaysMs: setting({
    env: "GW_WEBHOOK_RETRY_DELAYS_MS",
    faces: ["serve"],
    doc: "The 4 waits between the 5 webhook attempts, each with ±20 % jitter.",
    defaultText: "`5000,30000,120000,600000`",
    fallback: value([5000, 30000, 120000, 600000]),
    parse: p.integerList(4, 0),
  }),
  webhookTimeoutMs: setting({
    env: "GW_WEBHOOK_TIMEOUT_MS",
    faces: ["serve"],
    doc: "Per-attempt webhook timeout; a timeout counts as a connection failure.",
    defaultText: "`15000`",
    fallback: value(15000),
    parse: p.integer(1),
  }),
  webhookEvents: setting({
    env: "GW_WEBHOOK_EVENTS",
    faces: ["serve"],
    doc: "What webhooks push: `message` (the spec's delivery) and event kinds (`message.edited`, `message.deleted`, `reaction.added`, `reaction.removed`), comma-separated, or `all`. With any event kind every delivery carries `X-GW-Event`.",
    defaultText: "`message`",
    fallback: value(["message"] as WebhookKind[]),
    parse: p.listOf(WEBHOOK_KINDS),
  }),
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
  chatDbPath: setting({
    env: "GW_CHAT_DB_PATH",
    faces: ["serve"],
    doc: "macOS Messages database, opened read-only.",
    defaultText: "`~/Library/Messages/chat.db`",
    fallback: (_d, h) => join(h.homeDir, "Library/Messages/chat.db"),
    parse: p.path,
  }),
  devicePollIntervalMs: setting({
    env: "GW_DEVICE_POLL_INTERVAL_MS",
    faces: ["serve"],
    doc: "Fallback chat.db poll period; file-change notifications make pick-up faster.",
    defaultText: "`1000`",
    fallback: value(1000),
    parse: p.integer(10),
  }),
  deviceBackfillFenceMinutes: setting({
    env: "GW_DEVICE_BACKFILL_FENCE_MINUTES",
    faces: ["serve"],
    doc: "A new chat.db row dated this much before the newest date already read is iCloud backfill: not delivered (0 turns the fence off).",
    defaultText: "`15`",
    fallback: value(15),
    parse: p.integer(0),
  }),
  deviceAttachmentWaitMs: setting({
    env: "GW_DEVICE_ATTACHMENT_WAIT_MS",
    faces: ["serve"],
    doc: "How long an iMessage waits for attachments still downloading before it is delivered without them.",
    defaultText: "`60000`",
    fallback: value(60_000),
    parse: p.integer(0),
  }),
  deviceTrustedServices: setting({
    env: "GW_DEVICE_TRUSTED_SERVICES",
    faces: ["serve"],
    doc: 'Messages services an allowlist entry without `services` trusts: `iMessage`, `SMS`, `RCS`, comma-separated. SMS sender ids can be forged, so a message over another service is quarantined (see "Who can reach your agents").',
    defaultText: "`iMessage`",
    fallback: value(["iMessage"] as DeviceService[]),
    parse: p.services,
  }),
  osascriptPath: setting({
    env: "GW_OSASCRIPT_PATH",
    faces: ["serve"],
    doc: "Program that runs AppleScript for iMessage sends.",
    defaultText: "`/usr/bin/osascript`",
    fallback: value("/usr/bin/osascript"),
    parse: p.path,
  }),
  contacts: setting<boolean | null>({
    env: "GW_CONTACTS",
    faces: ["serve"],
    doc: "1: read the Contacts databases to name Messages senders and conversations (extensions §6); 0: no Contacts names.",
    defaultText: "`1` on macOS or with GW_CONTACTS_DIR, else `0`",
    fallback: none,
    parse: p.flag,
  }),
  contactsDir: setting({
    env: "GW_CONTACTS_DIR",
    faces: ["serve"],
    doc: "Folder of the Contacts databases (`AddressBook-v22.abcddb` and `Sources/*/`), opened read-only; set, it turns Contacts on off macOS too (tests, the demo).",
    defaultText: "`~/Library/Application Support/AddressBook`",
    fallback: (_d, h) => join(h.homeDir, "Library/Application Support/AddressBook"),
    parse: p.path,
  }),
  defaultRegion: setting<string | null>({
    env: "GW_DEFAULT_REGION",
    faces: ["serve"],
    doc: "Region (ISO 3166 alpha-2: `US`, `GB`, …) of phone numbers written without a country code, in Contacts and in handles without a country.",
    defaultText: "the system locale's region",
    fallback: none,
    parse: p.region,
  }),
  attachmentRetentionDays: setting({
    env: "GW_ATTACHMENT_RETENTION_DAYS",
    faces: ["serve"],
    doc: "Days after which stored attachment bytes are deleted (the record stays). Decimals allowed.",
    defaultText: "`30`",
    fallback: value(30),
    parse: p.positiveNumber,
  }),
  attachmentMaxBytes: setting({
    env: "GW_ATTACHMENT_MAX_BYTES",
    faces: ["serve"],
    doc: "Larger inbound attachments are not re-hosted (warning; the envelope is delivered without them).",
    defaultText: "`104857600`",
    fallback: value(104_857_600),
    parse: p.integer(0),
  }),
  rateLimitPerChannelRps: setting({
    env: "GW_RATE_LIMIT_PER_CHANNEL_RPS",
    faces: ["serve"],
    doc: "Send-rate token refill per channel, per second (decimals allowed).",
    defaultText: "`1`",
    fallback: value(1),
    parse: p.positiveNumber,
  }),
  rateLimitBurst: setting({
    env: "GW_RATE_LIMIT_BURST",
    faces: ["serve"],
    doc: "Send-rate bucket capacity per channel.",
    defaultText: "`5`",
    fallback: value(5),
    parse: p.integer(1),
  }),
  idempotencyTtlHours: setting({
    env: "GW_IDEMPOTENCY_TTL_HOURS",
    faces: ["serve"],
    doc: "How long an `Idempotency-Key` is remembered.",
    defaultText: "`24`",
    fallback: value(24),
    parse: p.positiveNumber,
  }),
  sendPathRoots: setting<string[] | null>({
    env: "GW_SEND_PATH_ROOTS",
    faces: ["serve"],
    doc: "If set (`:`-separated absolute dirs), `path` attachments must resolve inside one of them.",
    defaultText: "unset",
    fallback: none,
    parse: p.absoluteDirList,
  }),
  agentId: setting<string | null>({
    env: "GW_AGENT_ID",
    faces: ["receiver", "mcp"],
    doc: "Agent identity sent as `X-Agent-ID` (keys the read cursor). The receiver uses `gw-receiver` when unset.",
    defaultText: "unset (receiver: `gw-receiver`)",
    fallback: none,
    parse: p.text,
  }),
  baseUrl: setting({
    env: "GW_BASE_URL",
    faces: ["receiver", "mcp"],
    doc: "Service address used by `gw mcp` and the receiver.",
    defaultText: "`http://127.0.0.1:8080`",
    fallback: value("http://127.0.0.1:8080"),
    parse: p.httpUrl,
  }),
  mcpChannel: setting({
    env: "GW_MCP_CHANNEL",
    faces: ["mcp"],
    doc: "1: `gw mcp` is also a Claude Code channel, pushing each new allowlisted message into the session (same as `gw mcp --channel`).",
    defaultText: "`0`",
    fallback: value(false),
    parse: p.flag,
  }),
  mcpExtended: setting({
    env: "GW_MCP_EXTENDED",
    faces: ["mcp"],
    doc: "1: `gw mcp` also serves react, edit_message, list_channels, search_messages and get_attachment (same as `gw mcp --extended`; a channel always does).",
    defaultText: "`0`",
    fallback: value(false),
    parse: p.flag,
  }),
  mcpOwner: setting<string | null>({
    env: "GW_MCP_OWNER",
    faces: ["mcp"],
    doc: "The allowlisted `person_id` who answers Claude Code's permission prompts from the phone (with `--channel`): each prompt goes to that person's one-to-one chats, and `yes <id>` / `no <id>` there answers it.",
    defaultText: "unset (no phone approval)",
    fallback: none,
    parse: p.text,
  }),
  mcpApprovalExpiryS: setting({
    env: "GW_MCP_APPROVAL_EXPIRY_S",
    faces: ["mcp"],
    doc: "Seconds a permission prompt sent to the owner's phone waits for `yes <id>` / `no <id>`; a later answer is an ordinary message.",
    defaultText: "`600` (10 minutes)",
    fallback: value(600),
    parse: p.integer(1),
  }),
  sipsPath: setting({
    env: "GW_SIPS_PATH",
    faces: ["mcp"],
    doc: "Program that converts HEIC/HEIF photos to JPEG for `get_attachment` (macOS `sips`); where it is missing the tool returns the file's path with a note.",
    defaultText: "`/usr/bin/sips`",
    fallback: value("/usr/bin/sips"),
    parse: p.path,
  }),
  receiverBindHost: setting({
    env: "GW_RECEIVER_BIND_HOST",
    faces: ["receiver"],
    doc: "Address the webhook receiver listens on.",
    defaultText: "`127.0.0.1`",
    fallback: value("127.0.0.1"),
    parse: p.hostName,
  }),
  receiverBindPort: setting({
    env: "GW_RECEIVER_BIND_PORT",
    faces: ["receiver"],
    doc: "Port the webhook receiver listens on.",
    defaultText: "`8090`",
    fallback: value(8090),
    parse: p.port,
  }),
  receiverAgentBin: setting({
    env: "GW_RECEIVER_AGENT_BIN",
    faces: ["receiver"],
    doc: "Agent command-line program the receiver runs once per message.",
    defaultText: "`claude`",
    fallback: value("claude"),
    parse: p.text,
  }),
  receiverAgentArgs: setting<string[] | null>({
    env: "GW_RECEIVER_AGENT_ARGS",
    faces: ["receiver"],
    doc: 'Runs an agent other than Claude Code: its own arguments as a JSON array of strings (e.g. `["run", "--quiet"]`, `[]` for none). Set, the agent runs as GW_RECEIVER_AGENT_BIN with exactly these arguments, none of Claude Code\'s flags; the prompt and the MCP config are files named by `GW_PROMPT_FILE` and `GW_MCP_CONFIG` in its environment (see "Any other agent").',
    defaultText: "unset (Claude Code's flags)",
    fallback: none,
    parse: p.jsonStringArray,
  }),
  receiverAgentPromptFile: setting({
    env: "GW_RECEIVER_AGENT_PROMPT_FILE",
    faces: ["receiver"],
    doc: "System prompt read on every run; a bundled default is used when the file is missing.",
    defaultText: "`<config dir>/receiver-prompt.md`",
    fallback: (d) => join(d.configDir, "receiver-prompt.md"),
    parse: p.path,
  }),
  receiverAgentTimeoutSeconds: setting({
    env: "GW_RECEIVER_AGENT_TIMEOUT_SECONDS",
    faces: ["receiver"],
    doc: "Wall-clock budget of one agent run.",
    defaultText: "`300`",
    fallback: value(300),
    parse: p.positiveNumber,
  }),
  receiverIdleWorkerTtlSeconds: setting({
    env: "GW_RECEIVER_IDLE_WORKER_TTL_SECONDS",
    faces: ["receiver"],
    doc: "Idle time after which a per-channel worker is evicted.",
    defaultText: "`300`",
    fallback: value(300),
    parse: p.positiveNumber,
  }),
  receiverDangerous: setting({
    env: "GW_RECEIVER_DANGEROUS",
    faces: ["receiver"],
    doc: "1 replaces the four-tool restriction with the agent's permission-skipping mode.",
    defaultText: "`0`",
    fallback: value(false),
    parse: p.flag,
  }),
  receiverAgentEnv: setting<string[] | null>({
    env: "GW_RECEIVER_AGENT_ENV",
    faces: ["receiver"],
    doc: "Extra environment variable names passed to the agent (comma-separated, e.g. `ANTHROPIC_API_KEY`); it otherwise gets only PATH, HOME, user, locale and TMPDIR.",
    defaultText: "unset",
    fallback: none,
    parse: p.envNameList,
  }),
  receiverSeenCapacity: setting({
    env: "GW_RECEIVER_SEEN_CAPACITY",
    faces: ["receiver"],
    doc: "Size of the receiver's seen-delivery set.",
    defaultText: "`10000`",
    fallback: value(10_000),
    parse: p.integer(1),
  }),
  receiverDbPath: setting({
    env: "GW_RECEIVER_DB_PATH",
    faces: ["receiver"],
    doc: "The receiver's journal of accepted deliveries (SQLite, created 0600): each is committed before its 204, and one whose run had not ended runs again at the next start; ended ones are kept 24 h as seen ids.",
    defaultText: "`<data dir>/receiver.db`",
    fallback: (d) => join(d.dataDir, "receiver.db"),
    parse: p.path,
  }),
  receiverQueueMax: setting({
    env: "GW_RECEIVER_QUEUE_MAX",
    faces: ["receiver"],
    doc: "Jobs waiting per channel in the receiver; beyond it a delivery gets 503 RECEIVER_BUSY, is not journaled, and the sender retries it.",
    defaultText: "`1000`",
    fallback: value(1000),
    parse: p.integer(1),
  }),
  receiverAckEmoji: setting<string | null>({
    env: "GW_RECEIVER_ACK_EMOJI",
    faces: ["receiver"],
    doc: "A reaction gw keeps on a Discord message while its run waits or runs (e.g. `👀`; Unicode or `<:name:id>`), taken back when the run ends, however it ends; iMessage messages get none. Each reaction and its removal take a token of the channel's rate limit, like a send.",
    defaultText: "unset (no reaction)",
    fallback: none,
    parse: p.reactionEmoji,
  }),
  receiverBatchMs: setting({
    env: "GW_RECEIVER_BATCH_MS",
    faces: ["receiver"],
    doc: "Folds a channel's messages into one run: a run takes the oldest waiting message and every later one that came within this many ms of it, and starts when that window closes and no run of the channel is running; its stdin holds a JSON array of their envelopes. 0 = one run per message (the spec's). At most 60000.",
    defaultText: "`0`",
    fallback: value(0),
    parse: p.integer(0, 60_000),
  }),
  receiverCommands: setting({
    env: "GW_RECEIVER_COMMANDS",
    faces: ["receiver"],
    doc: '1: `/stop`, `/status` and `/new` (any case) from an allowlisted person in a one-to-one chat over iMessage or Discord steer that chat\'s runs instead of starting one (see "Steering runs from the phone").',
    defaultText: "`0`",
    fallback: value(false),
    parse: p.flag,
  }),
  serviceManager: setting<"launchd" | "systemd">({
    env: "GW_SERVICE_MANAGER",
    faces: ["service"],
    doc: "Which login-service manager `gw service` writes for: `launchd` (a LaunchAgent) or `systemd` (a user unit).",
    defaultText: "`launchd` on macOS, else `systemd`",
    fallback: (_d, h) => (h.platform === "darwin" ? "launchd" : "systemd"),
    parse: p.oneOf(["launchd", "systemd"] as const),
  }),
};

export type SettingKey = keyof typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type Config = { readonly [K in SettingKey]: ValueOf<(typeof SETTINGS)[K]> } & {
  /** Whether gw reads chat.db: on macOS, or anywhere GW_CHAT_DB_PATH is set (tests, the demo). */
  readonly deviceMessengerOn: boolean;
  /** Whether gw reads Contacts: GW_CONTACTS when set, else on macOS or wherever GW_CONTACTS_DIR is set. */
  readonly contactsOn: boolean;
};
