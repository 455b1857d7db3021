/**
 * Settings of `gw receiver`: its address, the agent it runs and how, its journal and queue, and phone
 * control of runs. Rows of the settings table (settings.ts), in the order the README and `gw --help` list
 * them.
 */
import { join } from "node:path";
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

export const RECEIVER_SETTINGS = {
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
};
