/**
 * Settings of what agents use: their id, the API's URL, and `gw mcp`'s modes (channel, extended tools, phone
 * approval). Rows of the settings table (settings.ts), in the order the README and `gw --help` list them.
 */
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

export const AGENT_SETTINGS = {
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
};
