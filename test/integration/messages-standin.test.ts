/**
 * The osascript + Messages.app stand-in (src/demo/messages-standin.ts) run in-process with gw's real send
 * scripts: the rows it writes for a text or a file, the participant fallback, its call log, Messages'
 * errors, the GW_STANDIN_FAIL* and GW_STANDIN_DELAY_MS faults, scripts that are not gw's, and a chat.db
 * built from the real Sequoia dump when shared/fixtures has it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  SEND_FILE_TO_CHAT,
  SEND_TEXT_TO_CHAT,
  SEND_TEXT_TO_PARTICIPANT,
} from "../../src/connectors/device-messenger/applescript.ts";
import { CHAT_DB_SCHEMA_SQL } from "../../src/demo/chatdb-schema.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { ABORTED_EXIT, runMessagesStandIn, type StandInIo } from "../../src/demo/messages-standin.ts";
import {
  all,
  bodyOf,
  DM,
  exact,
  FIXTURE,
  GROUP,
  HAS_FIXTURE,
  JUNE_MS,
  JUNE_NS,
  one,
  type Row,
} from "../helpers/chatdb-fakes.ts";
import { tempDir } from "../helpers/temp.ts";

/** A chat.db with the two test chats, the stand-in's environment, and helpers to read what it wrote. */
function standInSetup(schemaSql = CHAT_DB_SCHEMA_SQL) {
  const dir = tempDir("gw-standin-");
  const dbPath = join(dir, "chat.db");
  const writer = openChatDbWriter(dbPath, { schemaSql });
  writer.chat({ guid: DM, style: 45, chatIdentifier: "+15555550100", participants: ["+15555550100"] });
  const group = { guid: GROUP, style: 43, chatIdentifier: "chat100000000000000001" } as const;
  writer.chat({ ...group, participants: ["+15555550101"] });
  const env: Record<string, string | undefined> = {
    GW_STANDIN_CHAT_DB: dbPath,
    GW_STANDIN_LOG: join(dir, "calls.jsonl"),
  };
  let stderr = "";
  const call = (script: string, values: string[], extra: Partial<StandInIo> = {}) => {
    stderr = "";
    const io: StandInIo = {
      argv: ["-", ...values],
      stdin: script,
      env,
      stderr: { write: (s) => (stderr += s) },
    };
    return runMessagesStandIn({ ...io, now: () => JUNE_MS, ...extra });
  };
  const rows = () =>
    all(
      writer.db,
      `SELECT m.*, c.guid AS chat_guid FROM message m
       LEFT JOIN chat_message_join j ON j.message_id = m.ROWID LEFT JOIN chat c ON c.ROWID = j.chat_id ORDER BY m.ROWID`,
    );
  return { dir, dbPath, env, writer, call, rows, stderr: () => stderr };
}

const OSA_ERROR = (code: number) => new RegExp(`^\\d+:\\d+: execution error: .+ \\(${code}\\)\\n$`);

describe("the Messages stand-in", () => {
  test("text to a chat id writes an own row with the body only in attributedBody, in that chat, dated now", async () => {
    const s = standInSetup();
    expect(await s.call(SEND_TEXT_TO_CHAT, ["-n starts with a dash", GROUP])).toBe(0);
    const [row] = s.rows();
    expect(row).toMatchObject({ is_from_me: 1, is_sent: 1, handle_id: 0, text: null, chat_guid: GROUP });
    expect(bodyOf(row as Row)).toBe("-n starts with a dash");
    expect(exact<Row>(s.dbPath, "SELECT date FROM message").date).toBe(JUNE_NS);
    expect(s.stderr()).toBe("");
  });

  test("a file to a chat id writes the U+FFFC body and a finished attachment row named after the file", async () => {
    const s = standInSetup();
    const file = join(s.dir, "photo.png");
    writeFileSync(file, "not really a png");
    expect(await s.call(SEND_FILE_TO_CHAT, [file, DM])).toBe(0);
    const [row] = s.rows();
    expect(row).toMatchObject({ is_from_me: 1, text: null, chat_guid: DM, cache_has_attachments: 1 });
    expect(bodyOf(row as Row)).toBe("\uFFFC");
    const att = one(s.writer.db, "SELECT * FROM attachment");
    expect(att).toMatchObject({
      transfer_name: "photo.png",
      filename: file,
      transfer_state: 5,
      is_outgoing: 1,
    });
    expect(att).toMatchObject({ mime_type: "image/png", total_bytes: 16 });
  });

  test("the participant fallback uses the existing one-to-one chat, or creates it", async () => {
    const s = standInSetup();
    expect(await s.call(SEND_TEXT_TO_PARTICIPANT, ["hello again", "+15555550100"])).toBe(0);
    expect(await s.call(SEND_TEXT_TO_PARTICIPANT, ["first words", "new@example.com"])).toBe(0);
    const rows = s.rows();
    expect(rows.map((r) => [r.chat_guid, bodyOf(r)])).toEqual([
      [DM, "hello again"],
      ["iMessage;-;new@example.com", "first words"],
    ]);
    const chat = one(
      s.writer.db,
      "SELECT style, chat_identifier FROM chat WHERE guid = 'iMessage;-;new@example.com'",
    );
    expect(chat).toEqual({ style: 45, chat_identifier: "new@example.com" });
  });

  test("logs one JSON line per call, failures included", async () => {
    const s = standInSetup();
    await s.call(SEND_TEXT_TO_CHAT, ["one", DM]);
    await s.call(SEND_TEXT_TO_CHAT, ["two", "iMessage;-;nobody"]);
    const lines = readFileSync(s.env.GW_STANDIN_LOG as string, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { argv: ["-", "one", DM], script: SEND_TEXT_TO_CHAT, at: "2024-06-01T12:00:00.123Z" },
      { argv: ["-", "two", "iMessage;-;nobody"], script: SEND_TEXT_TO_CHAT, at: "2024-06-01T12:00:00.123Z" },
    ]);
  });

  test("an unknown chat id fails with -1728 like Messages and writes nothing", async () => {
    const s = standInSetup();
    expect(await s.call(SEND_TEXT_TO_CHAT, ["x", "any;-;+15555550199"])).toBe(1);
    expect(s.stderr()).toMatch(OSA_ERROR(-1728));
    expect(s.stderr()).toContain('chat id "any;-;+15555550199"');
    expect(s.rows()).toEqual([]);
  });

  for (const code of [-1743, -1728, -1700]) {
    test(`GW_STANDIN_FAIL=${code} exits 1 with osascript's error line and writes nothing`, async () => {
      const s = standInSetup();
      s.env.GW_STANDIN_FAIL = String(code);
      expect(await s.call(SEND_TEXT_TO_CHAT, ["x", DM])).toBe(1);
      expect(s.stderr()).toMatch(OSA_ERROR(code));
      expect(s.rows()).toEqual([]);
    });
  }

  test("GW_STANDIN_FAIL=timeout never returns (until aborted) and writes nothing", async () => {
    const s = standInSetup();
    s.env.GW_STANDIN_FAIL = "timeout";
    const abort = new AbortController();
    const run = s.call(SEND_TEXT_TO_CHAT, ["x", DM], { signal: abort.signal });
    const early = await Promise.race([run, Bun.sleep(150).then(() => "pending")]);
    expect(early).toBe("pending");
    abort.abort();
    expect(await run).toBe(ABORTED_EXIT);
    expect(s.rows()).toEqual([]);
  });

  test("GW_STANDIN_FAIL=silent exits 0 without writing a row", async () => {
    const s = standInSetup();
    s.env.GW_STANDIN_FAIL = "silent";
    expect(await s.call(SEND_TEXT_TO_CHAT, ["x", DM])).toBe(0);
    expect(s.stderr()).toBe("");
    expect(s.rows()).toEqual([]);
  });

  test("GW_STANDIN_FAIL_FILE applies once and is deleted; the next call succeeds", async () => {
    const s = standInSetup();
    const failFile = join(s.dir, "fail-once");
    writeFileSync(failFile, "-1743\n");
    s.env.GW_STANDIN_FAIL_FILE = failFile;
    expect(await s.call(SEND_TEXT_TO_CHAT, ["first", DM])).toBe(1);
    expect(s.stderr()).toMatch(OSA_ERROR(-1743));
    expect(existsSync(failFile)).toBe(false);
    expect(await s.call(SEND_TEXT_TO_CHAT, ["second", DM])).toBe(0);
    expect(s.rows().map(bodyOf)).toEqual(["second"]);
  });

  test("GW_STANDIN_DELAY_MS: the exit code comes first, the row a little later", async () => {
    const s = standInSetup();
    s.env.GW_STANDIN_DELAY_MS = "200";
    expect(await s.call(SEND_TEXT_TO_CHAT, ["later", DM])).toBe(0);
    expect(s.rows()).toEqual([]);
    const deadline = Date.now() + 3000;
    while (s.rows().length === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(s.rows().map(bodyOf)).toEqual(["later"]);
  });

  test("refuses a script that is not one of gw's, and a call without the `-` script name", async () => {
    const s = standInSetup();
    expect(await s.call('tell application "Messages" to quit', ["x", DM])).toBe(1);
    expect(s.stderr()).toMatch(/execution error/);
    const io = { argv: ["x", DM], stdin: SEND_TEXT_TO_CHAT, env: s.env, stderr: { write: () => 0 } };
    expect(await runMessagesStandIn(io)).toBe(1);
    expect(s.rows()).toEqual([]);
  });

  test.if(HAS_FIXTURE)("writes into a chat.db built from the real Sequoia dump", async () => {
    const s = standInSetup(readFileSync(FIXTURE, "utf8"));
    expect(await s.call(SEND_TEXT_TO_CHAT, ["on the real schema", GROUP])).toBe(0);
    const [row] = s.rows();
    expect(row).toMatchObject({
      is_from_me: 1,
      text: null,
      chat_guid: GROUP,
      cache_roomnames: "chat100000000000000001",
    });
    expect(bodyOf(row as Row)).toBe("on the real schema");
    expect(one(s.writer.db, "PRAGMA integrity_check").integrity_check).toBe("ok");
  });
});
