/**
 * The demo fakes of macOS Messages: our chat.db schema subset (checked column by column against the
 * real Sequoia dump when the shared fixture is present), the row writer on both schemas, and the
 * osascript + Messages.app stand-in run in-process with gw's real send scripts.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  SEND_FILE_TO_CHAT,
  SEND_TEXT_TO_CHAT,
  SEND_TEXT_TO_PARTICIPANT,
} from "../../src/connectors/device-messenger/applescript.ts";
import { decodeAttributedBody } from "../../src/connectors/device-messenger/typedstream.ts";
import { CHAT_DB_SCHEMA_SQL } from "../../src/demo/chatdb-schema.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { ABORTED_EXIT, runMessagesStandIn, type StandInIo } from "../../src/demo/messages-standin.ts";
import { tempDir } from "../helpers/temp.ts";

const FIXTURE = join(import.meta.dir, "../../../shared/fixtures/chatdb/schema-sequoia.sql");
const HAS_FIXTURE = existsSync(FIXTURE);
const SCHEMAS: [string, () => string][] = [["our subset", () => CHAT_DB_SCHEMA_SQL]];
if (HAS_FIXTURE) SCHEMAS.push(["the real Sequoia dump", () => readFileSync(FIXTURE, "utf8")]);

const DM = "iMessage;-;+15555550100";
const GROUP = "iMessage;+;chat100000000000000001";
/** 2024-06-01T12:00:00.123Z. */
const JUNE_MS = 1_717_243_200_123;
const JUNE_NS = 738_936_000_123_000_000n;

type Row = Record<string, unknown>;

function newWriter(schemaSql: string, now = () => JUNE_MS) {
  const path = join(tempDir("gw-chatdb-"), "chat.db");
  const writer = openChatDbWriter(path, { schemaSql, now });
  writer.chat({ guid: DM, style: 45, chatIdentifier: "+15555550100", participants: ["+15555550100"] });
  writer.chat({
    guid: GROUP,
    style: 43,
    chatIdentifier: "chat100000000000000001",
    displayName: "Walk",
    participants: ["+15555550100", "friend@example.com"],
  });
  return { path, writer };
}

const one = (db: Database, sql: string, ...args: (string | number)[]) =>
  db.query<Row, (string | number)[]>(sql).get(...args) as Row;
const all = (db: Database, sql: string, ...args: (string | number)[]) =>
  db.query<Row, (string | number)[]>(sql).all(...args);

/** Reads with a second, read-only connection that returns every integer as a bigint. */
function exact<T>(path: string, sql: string, ...args: number[]): T {
  const db = new Database(path, { readonly: true, safeIntegers: true });
  try {
    return db.query<T, number[]>(sql).get(...args) as T;
  } finally {
    db.close();
  }
}

const bodyOf = (row: Row) => decodeAttributedBody(row.attributedBody as Uint8Array | null);

describe("the chat.db schema subset", () => {
  const db = new Database(":memory:");
  db.exec(CHAT_DB_SCHEMA_SQL);
  const columns = (table: string, d = db) =>
    d
      .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, []>(
        `PRAGMA table_info(${table})`,
      )
      .all();

  test("has exactly the eight tables gw reads or its triggers touch", () => {
    const tables = all(
      db,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    expect(tables.map((t) => t.name).sort()).toEqual([
      "attachment",
      "chat",
      "chat_handle_join",
      "chat_message_join",
      "deleted_messages",
      "handle",
      "message",
      "message_attachment_join",
    ]);
  });

  test("keeps every column the field guide names", () => {
    const want: Record<string, string[]> = {
      message: (
        "ROWID guid text attributedBody handle_id service account date date_read date_delivered is_from_me " +
        "is_sent is_delivered is_read is_finished error item_type group_action_type group_title " +
        "associated_message_guid associated_message_type associated_message_emoji balloon_bundle_id " +
        "thread_originator_guid thread_originator_part reply_to_guid date_edited date_retracted is_empty " +
        "cache_has_attachments cache_roomnames schedule_type schedule_state was_downgraded is_spam " +
        "message_summary_info part_count"
      ).split(" "),
      chat: (
        "ROWID guid style state account_id chat_identifier service_name room_name display_name is_filtered " +
        "last_addressed_handle"
      ).split(" "),
      handle: ["ROWID", "id", "service", "uncanonicalized_id"],
      attachment: (
        "ROWID guid created_date filename uti mime_type transfer_state is_outgoing transfer_name total_bytes " +
        "hide_attachment is_sticker original_guid"
      ).split(" "),
      chat_message_join: ["chat_id", "message_id", "message_date"],
    };
    for (const [table, names] of Object.entries(want)) {
      const have = new Set(columns(table).map((c) => c.name));
      expect(names.filter((n) => !have.has(n))).toEqual([]);
    }
  });

  test.if(HAS_FIXTURE)("every kept column, index and trigger is Apple's, definition for definition", () => {
    const real = new Database(":memory:");
    real.exec(readFileSync(FIXTURE, "utf8"));
    const tables = all(
      db,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    for (const { name } of tables) {
      const theirs = new Map(columns(String(name), real).map((c) => [c.name, c]));
      for (const col of columns(String(name))) {
        expect({ table: name, ...col, cid: 0 }).toEqual({
          table: name,
          ...theirs.get(col.name),
          cid: 0,
        } as never);
      }
    }
    const shape = (d: Database, type: string) =>
      all(d, "SELECT name, tbl_name FROM sqlite_master WHERE type = ?1 AND sql IS NOT NULL", type);
    const realIndexes = shape(real, "index").map((r) => r.name);
    for (const { name } of shape(db, "index")) {
      expect(realIndexes).toContain(name);
      const cols = (d: Database) => all(d, `PRAGMA index_info(${name})`).map((r) => r.name);
      expect(cols(db)).toEqual(cols(real));
    }
    const realTriggers = shape(real, "trigger").map((r) => `${r.name}@${r.tbl_name}`);
    for (const t of shape(db, "trigger")) expect(realTriggers).toContain(`${t.name}@${t.tbl_name}`);
    real.close();
  });

  test("indexes date, (handle_id, date), the join's (chat_id, message_date, message_id) but not date_edited", () => {
    const indexed = all(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'message'")
      .flatMap((i) => all(db, `PRAGMA index_info(${i.name})`).map((c) => c.name))
      .join(",");
    expect(indexed).toContain("date");
    expect(indexed).not.toContain("date_edited");
    expect(all(db, "PRAGMA index_info(message_idx_handle)").map((c) => c.name)).toEqual([
      "handle_id",
      "date",
    ]);
    const join = all(db, "PRAGMA index_info(chat_message_join_idx_message_date_id_chat_id)").map(
      (c) => c.name,
    );
    expect(join).toEqual(["chat_id", "message_date", "message_id"]);
  });
});

for (const [label, schema] of SCHEMAS) {
  describe(`the chat.db writer on ${label}`, () => {
    test("creates a WAL database with a 5 s busy timeout, and applies the schema only to a database without one", () => {
      const { path, writer } = newWriter(schema());
      expect(one(writer.db, "PRAGMA journal_mode").journal_mode).toBe("wal");
      expect(one(writer.db, "PRAGMA busy_timeout").timeout).toBe(5000);
      writer.close();
      const again = openChatDbWriter(path, { schemaSql: "THIS IS NOT SQL" });
      expect(again.chat({ guid: DM, style: 45, chatIdentifier: "+15555550100", participants: [] })).toBe(1);
      again.close();
    });

    test("handles are unique per (id, service); chats are get-or-create with their participants", () => {
      const { writer } = newWriter(schema());
      const imessage = writer.handle("+15555550100");
      expect(writer.handle("+15555550100", "iMessage")).toBe(imessage);
      expect(writer.handle("+15555550100", "SMS")).not.toBe(imessage);
      const group = writer.chat({ guid: GROUP, style: 43, chatIdentifier: "x", participants: [] });
      expect(one(writer.db, "SELECT COUNT(*) AS n FROM chat").n).toBe(2);
      const chat = one(writer.db, "SELECT * FROM chat WHERE ROWID = ?1", group);
      expect(chat).toMatchObject({ style: 43, room_name: "chat100000000000000001", display_name: "Walk" });
      const members = all(
        writer.db,
        "SELECT h.id FROM chat_handle_join j JOIN handle h ON h.ROWID = j.handle_id WHERE j.chat_id = ?1 ORDER BY h.id",
        group,
      );
      expect(members.map((m) => m.id)).toEqual(["+15555550100", "friend@example.com"]);
      writer.close();
    });

    test("an incoming message: body only in attributedBody, sender handle, flags and joins as Messages writes them", () => {
      const { path, writer } = newWriter(schema());
      const { rowid, guid } = writer.message({
        chatGuid: GROUP,
        from: "friend@example.com",
        text: "héllo 👋🏽",
      });
      expect(guid).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
      const row = one(writer.db, "SELECT * FROM message WHERE ROWID = ?1", rowid);
      expect(row.text).toBeNull();
      expect(bodyOf(row)).toBe("héllo 👋🏽");
      expect(row).toMatchObject({
        handle_id: writer.handle("friend@example.com"),
        is_from_me: 0,
        is_sent: 0,
      });
      expect(row).toMatchObject({
        is_delivered: 1,
        is_finished: 1,
        error: 0,
        service: "iMessage",
        item_type: 0,
      });
      expect(row).toMatchObject({ cache_roomnames: "chat100000000000000001", cache_has_attachments: 0 });
      const dates = exact<Row>(
        path,
        "SELECT m.date, j.message_date FROM message m JOIN chat_message_join j ON j.message_id = m.ROWID WHERE m.ROWID = ?1",
        rowid,
      );
      expect(dates).toEqual({ date: JUNE_NS, message_date: JUNE_NS });
      writer.close();
    });

    test("an own message: handle_id 0, sent, delivered, finished; no room names in a one-to-one chat", () => {
      const { path, writer } = newWriter(schema());
      const { rowid } = writer.message({ chatGuid: DM, from: null, isFromMe: true, text: "on my way" });
      const row = one(writer.db, "SELECT * FROM message WHERE ROWID = ?1", rowid);
      expect(row).toMatchObject({ handle_id: 0, is_from_me: 1, is_sent: 1, is_delivered: 1, is_finished: 1 });
      expect(row.cache_roomnames).toBeNull();
      expect(exact<Row>(path, "SELECT date_delivered FROM message WHERE ROWID = ?1", rowid)).toEqual({
        date_delivered: JUNE_NS,
      });
      writer.close();
    });

    test("nanosecond dates above 2^53 are stored exactly", () => {
      const { path, writer } = newWriter(schema());
      const a = writer.message({ chatGuid: DM, from: "+15555550100", text: "a", dateMs: JUNE_MS });
      const b = writer.message({
        chatGuid: DM,
        from: "+15555550100",
        text: "b",
        dateNs: 738_936_000_123_456_789n,
      });
      expect(JUNE_NS > 2n ** 53n && BigInt(Number(JUNE_NS)) !== JUNE_NS).toBe(true);
      expect(exact<Row>(path, "SELECT date FROM message WHERE ROWID = ?1", a.rowid).date).toBe(JUNE_NS);
      const date = exact<Row>(
        path,
        "SELECT date, CAST(date AS TEXT) AS t FROM message WHERE ROWID = ?1",
        b.rowid,
      );
      expect(date).toEqual({ date: 738_936_000_123_456_789n, t: "738936000123456789" });
      writer.close();
    });

    test("text and both body forms", () => {
      const { writer } = newWriter(schema());
      const t = writer.message({ chatGuid: DM, from: "+15555550100", text: "plain", bodyForm: "text" });
      const b = writer.message({ chatGuid: DM, from: "+15555550100", text: "twice", bodyForm: "both" });
      const rowT = one(writer.db, "SELECT text, attributedBody FROM message WHERE ROWID = ?1", t.rowid);
      const rowB = one(writer.db, "SELECT text, attributedBody FROM message WHERE ROWID = ?1", b.rowid);
      expect(rowT).toEqual({ text: "plain", attributedBody: null });
      expect([rowB.text, bodyOf(rowB)]).toEqual(["twice", "twice"]);
      writer.close();
    });

    test("attachments: one U+FFFC each before the text, rows in order, the trigger sets cache_has_attachments", () => {
      const { writer } = newWriter(schema());
      const { rowid } = writer.message({
        chatGuid: DM,
        from: "+15555550100",
        text: "look",
        attachments: [
          { path: "~/Library/Messages/Attachments/ab/11/X/IMG_1.HEIC", totalBytes: 2048 },
          { path: "/tmp/doc.bin", mimeType: null, uti: null, transferName: "doc.bin", transferState: 3 },
        ],
      });
      const row = one(writer.db, "SELECT * FROM message WHERE ROWID = ?1", rowid);
      expect(bodyOf(row)).toBe("\uFFFC\uFFFClook");
      expect(row).toMatchObject({ cache_has_attachments: 1, part_count: 3 });
      const atts = all(
        writer.db,
        `SELECT a.* FROM message_attachment_join j JOIN attachment a ON a.ROWID = j.attachment_id
         WHERE j.message_id = ?1 ORDER BY j.ROWID`,
        rowid,
      );
      expect(atts).toHaveLength(2);
      expect(atts[0]).toMatchObject({
        filename: "~/Library/Messages/Attachments/ab/11/X/IMG_1.HEIC",
        transfer_name: "IMG_1.HEIC",
        mime_type: "image/heic",
        uti: "public.heic",
        transfer_state: 5,
        total_bytes: 2048,
        is_outgoing: 0,
        hide_attachment: 0,
        is_sticker: 0,
      });
      expect(atts[0]?.original_guid).toBe(atts[0]?.guid as string);
      expect(atts[1]).toMatchObject({
        filename: "/tmp/doc.bin",
        mime_type: null,
        uti: null,
        transfer_state: 3,
      });
      writer.close();
    });

    test("a message and its rows are one transaction: a failing attachment row leaves no message behind", () => {
      const { writer } = newWriter(schema());
      writer.db.run(`CREATE TRIGGER test_boom BEFORE INSERT ON attachment WHEN NEW.filename = '/boom'
        BEGIN SELECT RAISE(ABORT, 'boom'); END`);
      const attachments = [{ path: "/tmp/ok.png" }, { path: "/boom" }];
      expect(() => writer.message({ chatGuid: DM, from: "+15555550100", text: "x", attachments })).toThrow(
        /boom/,
      );
      for (const table of ["message", "chat_message_join", "attachment", "message_attachment_join"]) {
        expect(one(writer.db, `SELECT COUNT(*) AS n FROM ${table}`).n).toBe(0);
      }
      writer.close();
    });

    test("Apple's trigger, not the writer, sets cache_has_attachments when the join row lands", () => {
      const { writer } = newWriter(schema());
      const { rowid } = writer.message({ chatGuid: DM, from: "+15555550100", text: "\uFFFC" });
      const cache = () =>
        one(writer.db, "SELECT cache_has_attachments AS c FROM message WHERE ROWID = ?1", rowid).c;
      expect(cache()).toBe(0);
      writer.db.run(
        "INSERT INTO attachment (guid, original_guid, filename) VALUES ('A1', 'A1', '/tmp/a.png')",
      );
      writer.db.run(`INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (${rowid}, 1)`);
      expect(cache()).toBe(1);
      writer.close();
    });

    test("late join: the row exists with no chat until joinChat adds it with the message's date", () => {
      const { path, writer } = newWriter(schema());
      const { rowid } = writer.message({
        chatGuid: GROUP,
        from: "+15555550100",
        text: "early",
        dateNs: 738_936_000_987_654_321n,
        joinChat: false,
      });
      expect(writer.maxRowid()).toBe(rowid);
      expect(all(writer.db, "SELECT * FROM chat_message_join WHERE message_id = ?1", rowid)).toEqual([]);
      writer.joinChat(rowid, GROUP);
      const join = exact<Row>(
        path,
        "SELECT chat_id, message_date FROM chat_message_join WHERE message_id = ?1",
        rowid,
      );
      expect(join).toEqual({ chat_id: 2n, message_date: 738_936_000_987_654_321n });
      expect(
        one(writer.db, "SELECT cache_roomnames FROM message WHERE ROWID = ?1", rowid).cache_roomnames,
      ).toBe("chat100000000000000001");
      writer.close();
    });

    test("reactions, group events and replies keep their columns; an unknown chat is refused", () => {
      const { writer } = newWriter(schema());
      const target = writer.message({ chatGuid: GROUP, from: "+15555550100", text: "hi" });
      const tapback = writer.message({
        chatGuid: GROUP,
        from: "friend@example.com",
        text: "Loved “hi”",
        associatedMessageType: 2000,
        associatedMessageGuid: `p:0/${target.guid}`,
      });
      const rename = writer.message({
        chatGuid: GROUP,
        from: "friend@example.com",
        text: "",
        itemType: 2,
        groupTitle: "Walks",
      });
      const reply = writer.message({
        chatGuid: GROUP,
        from: null,
        isFromMe: true,
        text: "yo",
        threadOriginatorGuid: target.guid,
      });
      const get = (rowid: number) => one(writer.db, "SELECT * FROM message WHERE ROWID = ?1", rowid);
      expect(get(tapback.rowid)).toMatchObject({
        associated_message_type: 2000,
        associated_message_guid: `p:0/${target.guid}`,
      });
      expect(get(rename.rowid)).toMatchObject({
        item_type: 2,
        group_title: "Walks",
        text: null,
        attributedBody: null,
      });
      expect(get(reply.rowid)).toMatchObject({
        thread_originator_guid: target.guid,
        thread_originator_part: "0:0:0",
      });
      expect(() => writer.message({ chatGuid: "iMessage;-;nobody", from: "x", text: "?" })).toThrow(
        /no chat/,
      );
      expect(writer.maxRowid()).toBe(reply.rowid);
      writer.close();
    });
  });
}

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
