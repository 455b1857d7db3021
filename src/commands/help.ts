/** Help texts for `gw --help` and `gw <command> --help`. */
import { MCP_SETUP } from "../mcp/setup-help.ts";
import { SERVICE_HELP, SERVICE_SUMMARY } from "../service-manager/help-text.ts";
import { VERSION } from "../version.ts";

export const COMMANDS = {
  serve: "Run the gateway: connectors, store, HTTP API, webhooks.",
  receiver: "Run the webhook receiver that starts one agent run per message.",
  mcp: "Serve the four agent tools over MCP stdio (nine with --extended).",
  doctor: "Check permissions, paths, tokens and the allowlist, and say what to fix.",
  demo: "Run a playground with simulated iMessage and Discord accounts; works on any machine.",
  webhooks: "List webhook deliveries, or queue dead ones again (list | redeliver <id> | --all-dead).",
  quarantine: "List the senders held in the quarantine, with the `gw allow` line for each.",
  allow: "Let a sender through: add them to the allowlist and reload the running service.",
  docs: "Write the API documentation page for this version to a file (and open it).",
  service: SERVICE_SUMMARY,
} as const;

export type CommandName = keyof typeof COMMANDS;

export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;
  const rows = Object.entries(COMMANDS).map(([name, text]) => `  ${name.padEnd(width)}${text}`);
  return [
    `gw ${VERSION} — a local gateway between messaging platforms and software agents`,
    "",
    "Usage: gw <command> [--help]",
    "",
    "Commands:",
    ...rows,
    "",
    "Options:",
    "  --version   Print the version.",
    "  --help      Print this help, or a command's help after its name.",
    "",
    "Configuration is read from GW_ environment variables; see the README's table.",
    "Exit status: 0 clean stop, 2 configuration error, 1 anything else.",
    "",
  ].join("\n");
}

const DETAILS: Record<CommandName, string> = {
  serve: [
    "Requires GW_BEARER_TOKEN. Listens on GW_BIND_HOST:GW_BIND_PORT (127.0.0.1:8080).",
    "SIGHUP reloads the allowlist; SIGINT/SIGTERM stop in order within 10 s (a second signal: at once; the same one again within 0.5 s is one, as Ctrl-C through `bun run` arrives twice).",
    "A Discord login that reaches no READY within GW_COMMUNITY_LOGIN_TIMEOUT_MS (30000) is retried.",
  ].join("\n"),
  receiver: [
    "Requires GW_BEARER_TOKEN and GW_WEBHOOK_SECRET (the same as gw serve's). Listens on",
    "GW_RECEIVER_BIND_HOST:GW_RECEIVER_BIND_PORT (127.0.0.1:8090): POST /webhook, GET /healthz.",
    "Each accepted message starts GW_RECEIVER_AGENT_BIN (default claude) once, one at a time per channel:",
    "  claude -p --system-prompt <prompt> --mcp-config <private file> --strict-mcp-config",
    '    --no-session-persistence --tools "" --allowedTools mcp__gw__<the four tools>',
    "with the message on stdin and this program's `gw mcp` as its only tools.",
    'Any other agent: GW_RECEIVER_AGENT_ARGS, its own arguments as a JSON array (e.g. ["run"]; [] for none),',
    "runs GW_RECEIVER_AGENT_BIN with exactly those, none of Claude Code's flags; the message still on stdin,",
    "the prompt and gw's MCP config as files named by GW_PROMPT_FILE and GW_MCP_CONFIG in its environment.",
    "Each accepted delivery is journaled in GW_RECEIVER_DB_PATH (default <data dir>/receiver.db) before",
    "its 204; after a crash or stop the next start runs the jobs whose run had not ended again, telling",
    "the agent the earlier run was interrupted. Over GW_RECEIVER_QUEUE_MAX (1000) jobs waiting in a",
    "channel: 503 RECEIVER_BUSY (gw serve retries).",
    "SIGINT/SIGTERM: stop accepting, give running agents 10 s, stop the rest (they run at the next start).",
    "Steering from the phone (all off by default):",
    "  GW_RECEIVER_ACK_EMOJI=👀    a reaction on each Discord message while its run waits or runs, taken",
    "                              back when the run ends, however it ends (iMessage: none).",
    "  GW_RECEIVER_BATCH_MS=3000   a channel's messages within 3 s of the oldest waiting one make one run",
    "                              (stdin: a JSON array of their envelopes); later ones wait for the next.",
    "  GW_RECEIVER_COMMANDS=1      /stop, /status, /new (any case) from an allowlisted person in a one-to-one",
    "                              chat over iMessage or Discord: stop the run and drop the waiting ones,",
    "                              say what runs and waits, or start the next run afresh. Answered in the",
    "                              chat; never run. From a group or over SMS/RCS they are ordinary messages.",
  ].join("\n"),
  mcp: [
    "Serves list_unread_messages, send_message, mark_read and get_message_context over stdio.",
    "Requires GW_BEARER_TOKEN; set GW_AGENT_ID and GW_BASE_URL. stdout carries MCP frames only.",
    "--extended (or GW_MCP_EXTENDED=1): also react, edit_message (both Discord only), list_channels,",
    "search_messages and get_attachment (photos up to 5 MB as images, HEIC converted with GW_SIPS_PATH,",
    "default /usr/bin/sips; other files as the path of a private local copy kept 24 h).",
    "--channel (or GW_MCP_CHANNEL=1): also a Claude Code channel that pushes each new allowlisted message",
    "for GW_AGENT_ID into the session (implies --extended); start Claude Code with",
    "  claude --dangerously-load-development-channels server:gw",
    "With GW_MCP_OWNER=<person_id> a channel also relays Claude Code's permission prompts to that person's",
    'one-to-one chats; their "yes <id>" or "no <id>" there answers (GW_MCP_APPROVAL_EXPIRY_S, default 600).',
    "",
    MCP_SETUP,
  ].join("\n"),
  doctor: [
    "gw doctor [--json]",
    "Reads the same GW_ variables as serve and prints one line per check, `level: what — why — how to fix`:",
    "  ok    nothing to do",
    "  warn  gw works, but look at it (why and what to do follow)",
    "  fail  gw cannot work around it until you act (why and what to do follow)",
    "The lines come in two groups: this shell's configuration (files, allowlist, chat.db, Messages, the",
    "Discord token, the webhook target: what gw serve would run if started from here), and the running",
    "service on GW_BIND_HOST:GW_BIND_PORT (whether it accepts this GW_BEARER_TOKEN, its connectors, dead",
    "webhooks, the login service), which may have been started with another configuration. --json gives",
    "each check's id, scope (config or running), level, what, why and fix.",
    "On macOS it asks Messages for its name, which shows the Automation prompt if it was never answered.",
    "Exit 0 when no check fails (warnings pass), 1 when one does, 2 when the configuration does not parse.",
  ].join("\n"),
  webhooks: [
    "gw webhooks list [--status pending|delivered|dead] [--limit N]",
    "gw webhooks redeliver <delivery id> | --all-dead",
    "Reads the state database at GW_DB_PATH; a running gw serve delivers re-queued rows within a second.",
  ].join("\n"),
  quarantine: [
    "gw quarantine [--source device_messenger|community_chat] [--limit N] [--json]",
    "Senders not on the allowlist, most recent first: how many messages, first and last seen, the newest",
    "text (control characters removed), and the `gw allow` line to let each through. Reads GW_DB_PATH.",
  ].join("\n"),
  allow: [
    "gw allow <device_messenger|community_chat> <sender id> --person <person id> [--name <display name>]",
    "Appends an [[entry]] to GW_ALLOWLIST_PATH (the rest of the file is kept; the id normalised; a sender",
    "already listed is refused) and sends SIGHUP to the running gw serve (its gw.pid). Messages already",
    "stored keep their status; the sender's next message reaches agents. Use the same person id for one",
    "person's iMessage and Discord entries.",
  ].join("\n"),
  docs: [
    "gw docs [--redoc] [--out <file>] [--open]",
    "Writes the self-contained Swagger UI page (ReDoc with --redoc) of this version's API, the page gw serve",
    "serves at /docs, to <data dir>/docs/ or --out, prints its path, and with --open opens it.",
  ].join("\n"),
  service: SERVICE_HELP,
  demo: [
    "Starts the real service on a temporary folder with a simulated iMessage account (a demo chat.db and a",
    "Messages stand-in) and a built-in fake Discord its real connector logs in to, where a friend writes,",
    "edits, unsends and reacts and a stranger stays quarantined; prints the webhooks it receives, a token,",
    "curl examples and the gw quarantine / gw allow lines for its files (it reloads on SIGHUP like gw serve).",
    "Options: --interval <seconds> between simulated events (default 4); --webhook-url <url> sends the",
    "webhooks to your own receiver (e.g. gw receiver) instead of the built-in one, and prints their secret.",
    "Listens on GW_BIND_PORT (default 8080). Ctrl-C stops it and removes the folder.",
  ].join("\n"),
};

export function commandHelp(name: CommandName): string {
  return `gw ${name} — ${COMMANDS[name]}\n\n${DETAILS[name]}\n`;
}
