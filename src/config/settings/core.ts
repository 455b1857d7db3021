/**
 * Settings of the service itself: the API's token and address, where its state, files and logs live, the
 * allowlist. Rows of the settings table (settings.ts), in the order the README and `gw --help` list them.
 */
import { join } from "node:path";
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

export const CORE_SETTINGS = {
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
};
