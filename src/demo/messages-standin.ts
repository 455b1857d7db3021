/**
 * A stand-in for `osascript` + Messages.app (used as GW_OSASCRIPT_PATH): called as `- <values...>` with gw's
 * send script on stdin, it writes the sent row into GW_STANDIN_CHAT_DB as Messages would and exits 0, or
 * fails like osascript (`NN:MM: execution error: ... (-1728)` on stderr, exit 1). Failures are injected with
 * GW_STANDIN_FAIL or the one-shot GW_STANDIN_FAIL_FILE (applyFailure). Every call is logged to
 * GW_STANDIN_LOG.
 */
import { appendFileSync, existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename } from "node:path";
import { type ChatDbWriter, openChatDbWriter } from "./chatdb-writer.ts";

export interface StandInIo {
  /** Everything after the program name: `["-", value1, value2, ...]`. */
  argv: string[];
  stdin: string;
  env: Record<string, string | undefined>;
  stderr: { write(s: string): unknown };
  /** Ends a simulated hang (`timeout`) early; the real program is killed instead. */
  signal?: AbortSignal;
  /** Clock in epoch milliseconds (default `Date.now`). */
  now?: () => number;
}

type Send =
  | { kind: "text"; text: string; chatGuid: string }
  | { kind: "file"; path: string; chatGuid: string }
  | { kind: "participant"; text: string; handle: string };

/** Exit code of a hang ended through `io.signal` (128 + SIGTERM). */
export const ABORTED_EXIT = 143;

const SHAPES = {
  file: "send POSIX file (item 1 of argv) to chat id (item 2 of argv)",
  text: "send (item 1 of argv) to chat id (item 2 of argv)",
  participant: "participant (item 2 of argv)",
} as const;

const MESSAGES_ERRORS: Record<string, string> = {
  "-1743": "Not authorized to send Apple events to Messages.",
  "-1728": "Messages got an error: Can’t get object.",
  "-1700": "Messages got an error: Can’t make any into type constant.",
};

/** Which of gw's three scripts this is, with its values; null for anything else. */
function parseSend(script: string, values: string[]): Send | null {
  const [first, second] = values;
  if (first === undefined || second === undefined) return null;
  if (script.includes(SHAPES.file)) return { kind: "file", path: first, chatGuid: second };
  if (script.includes(SHAPES.text)) return { kind: "text", text: first, chatGuid: second };
  if (script.includes(SHAPES.participant)) return { kind: "participant", text: first, handle: second };
  return null;
}

/** osascript's `start:end:` prefix: the character range of the failing `send` statement. */
function errorRange(script: string): string {
  const start = Math.max(0, script.indexOf("send "));
  const newline = script.indexOf("\n", start);
  return `${start}:${newline === -1 ? script.length : newline}`;
}

function executionError(io: StandInIo, code: string, detail?: string): number {
  const text = detail ?? MESSAGES_ERRORS[code] ?? `An error of type ${code} has occurred.`;
  io.stderr.write(`${errorRange(io.stdin)}: execution error: ${text} (${code})\n`);
  return 1;
}

function logCall(io: StandInIo, at: number): void {
  const path = io.env.GW_STANDIN_LOG;
  if (!path) return;
  appendFileSync(
    path,
    `${JSON.stringify({ argv: io.argv, script: io.stdin, at: new Date(at).toISOString() })}\n`,
  );
}

/** The injected failure mode, if any; a GW_STANDIN_FAIL_FILE is consumed (applies once). */
function takeFailure(env: StandInIo["env"]): string | null {
  const file = env.GW_STANDIN_FAIL_FILE;
  if (file && existsSync(file)) {
    const mode = readFileSync(file, "utf8").trim();
    rmSync(file, { force: true });
    return mode;
  }
  return env.GW_STANDIN_FAIL?.trim() || null;
}

/** Never settles unless `signal` aborts; the interval keeps a real process alive until it is killed. */
function hang(signal: AbortSignal | undefined): Promise<number> {
  if (signal?.aborted) return Promise.resolve(ABORTED_EXIT);
  return new Promise((resolve) => {
    const keepAlive = setInterval(() => {}, 60_000);
    signal?.addEventListener("abort", () => {
      clearInterval(keepAlive);
      resolve(ABORTED_EXIT);
    });
  });
}

/**
 * The exit code of an injected failure: an osascript error code, a hang (`timeout`, or `timeout-with-child`
 * leaving a helper that ignores SIGTERM), `silent` (exit 0, no row) or `ghost` (macOS 26's misrouted send:
 * exit 0 and an empty own row outside the chat).
 */
async function applyFailure(io: StandInIo, mode: string, request: Send | null): Promise<number> {
  if (mode === "timeout") return hang(io.signal);
  if (mode === "timeout-with-child") {
    // A helper that ignores SIGTERM, as AppleScript helpers can: only a process-group kill ends it.
    const child = Bun.spawn(["sh", "-c", "trap '' TERM; sleep 600"], { stdin: "ignore", stdout: "ignore" });
    if (io.env.GW_STANDIN_LOG)
      appendFileSync(io.env.GW_STANDIN_LOG, `${JSON.stringify({ child: child.pid })}\n`);
    return hang(io.signal);
  }
  if (mode === "silent") return 0;
  if (mode === "ghost") return ghost(io, request);
  if (/^-\d+$/.test(mode)) return executionError(io, mode);
  io.stderr.write(
    `messages stand-in: unknown failure mode "${mode}" (use -1743, -1728, -1700, timeout, timeout-with-child, silent, ghost)\n`,
  );
  return 1;
}

/** macOS 26's misrouted send: exit 0, and an empty own row with the recipient's handle and no chat. */
function ghost(io: StandInIo, request: Send | null): number {
  const dbPath = io.env.GW_STANDIN_CHAT_DB;
  if (!dbPath || !request) return 0;
  const handle = request.kind === "participant" ? request.handle : (request.chatGuid.split(";").at(-1) ?? "");
  const writer = openChatDbWriter(dbPath, io.now ? { now: io.now } : {});
  writeRow(io, writer, () => writer.message({ chatGuid: null, from: handle, isFromMe: true, text: "" }));
  return 0;
}

/** The guid of the newest one-to-one chat with this identifier, created (as iMessage) when missing. */
function oneToOneChat(writer: ChatDbWriter, handle: string): string {
  const row = writer.db
    .query<{ guid: string }, [string]>(
      `SELECT c.guid AS guid FROM chat c LEFT JOIN chat_message_join j ON j.chat_id = c.ROWID
       WHERE c.style = 45 AND c.chat_identifier = ?1
       GROUP BY c.ROWID ORDER BY (c.service_name = 'iMessage') DESC, MAX(j.message_date) DESC, c.ROWID DESC LIMIT 1`,
    )
    .get(handle);
  if (row) return row.guid;
  const guid = `iMessage;-;${handle}`;
  writer.chat({ guid, style: 45, chatIdentifier: handle, participants: [handle] });
  return guid;
}

function chatExists(writer: ChatDbWriter, guid: string): boolean {
  return writer.db.query("SELECT 1 FROM chat WHERE guid = ?1").get(guid) !== null;
}

function fileBytes(path: string): number | null {
  try {
    const s = statSync(path);
    return s.isFile() ? s.size : null;
  } catch {
    return null;
  }
}

/** Checks what Messages would refuse at once; returns the row to write, or an exit code. */
function prepare(io: StandInIo, writer: ChatDbWriter, send: Send): (() => void) | number {
  const chatGuid = send.kind === "participant" ? oneToOneChat(writer, send.handle) : send.chatGuid;
  if (!chatExists(writer, chatGuid)) {
    return executionError(io, "-1728", `Messages got an error: Can’t get chat id "${chatGuid}".`);
  }
  const base = { chatGuid, from: null, isFromMe: true, dateMs: (io.now ?? Date.now)() };
  if (send.kind !== "file") return () => writer.message({ ...base, text: send.text });
  const bytes = fileBytes(send.path);
  if (bytes === null) {
    return executionError(io, "-1728", `Messages got an error: Can’t get POSIX file "${send.path}".`);
  }
  const attachment = { path: send.path, transferName: basename(send.path), totalBytes: bytes };
  return () => writer.message({ ...base, text: "", attachments: [attachment] });
}

/** Writes now, or after GW_STANDIN_DELAY_MS while the caller already has its exit code. */
function writeRow(io: StandInIo, writer: ChatDbWriter, write: () => void): void {
  const finish = () => {
    try {
      write();
    } catch (err) {
      io.stderr.write(`messages stand-in: could not write the sent row: ${String(err)}\n`);
    } finally {
      writer.close();
    }
  };
  const delay = Number(io.env.GW_STANDIN_DELAY_MS ?? 0);
  if (Number.isFinite(delay) && delay > 0) setTimeout(finish, delay);
  else finish();
}

function deliver(io: StandInIo, request: Send): number {
  const dbPath = io.env.GW_STANDIN_CHAT_DB;
  if (!dbPath) {
    io.stderr.write("messages stand-in: GW_STANDIN_CHAT_DB is not set\n");
    return 1;
  }
  const writer = openChatDbWriter(dbPath, io.now ? { now: io.now } : {});
  const prepared = prepare(io, writer, request);
  if (typeof prepared === "number") {
    writer.close();
    return prepared;
  }
  writeRow(io, writer, prepared);
  return 0;
}

/** Resolves after GW_STANDIN_EXIT_DELAY_MS: osascript returning well after Messages wrote the row. */
function exitDelay(env: StandInIo["env"]): Promise<void> {
  const ms = Number(env.GW_STANDIN_EXIT_DELAY_MS ?? 0);
  return Number.isFinite(ms) && ms > 0 ? Bun.sleep(ms) : Promise.resolve();
}

/** Runs one osascript call; resolves with its exit code (never, for the `timeout` failure mode). */
export async function runMessagesStandIn(io: StandInIo): Promise<number> {
  logCall(io, (io.now ?? Date.now)());
  const [dash, ...values] = io.argv;
  if (dash !== "-") {
    io.stderr.write("messages stand-in: expected the script on stdin, called as `- <values...>`\n");
    return 1;
  }
  const parsed = parseSend(io.stdin, values);
  const failure = takeFailure(io.env);
  if (failure !== null) return applyFailure(io, failure, parsed);
  if (parsed === null) {
    io.stderr.write(`${errorRange(io.stdin)}: execution error: not one of gw's send scripts (-2753)\n`);
    return 1;
  }
  const code = deliver(io, parsed);
  await exitDelay(io.env);
  return code;
}
