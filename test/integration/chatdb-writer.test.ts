/**
 * The demo's chat.db row writer (src/demo/chatdb-writer.ts) on our schema subset and, when shared/fixtures
 * has it, the real Sequoia dump: handles, chats, incoming and own messages with the columns and joins
 * Messages writes, exact nanosecond dates, body forms, attachments and Apple's triggers, one transaction
 * per message, late chat joins, reactions, group events and replies.
 */
import { describe, expect, test } from "bun:test";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import {
  all,
  bodyOf,
  DM,
  exact,
  GROUP,
  JUNE_MS,
  JUNE_NS,
  newWriter,
  one,
  type Row,
  SCHEMAS,
} from "../helpers/chatdb-fakes.ts";

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
