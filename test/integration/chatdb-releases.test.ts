/**
 * The iMessage connector on the chat.db of six macOS releases (issue 30, item 4): each release's real
 * tables (shared/fixtures/chatdb/versions, chatdb-releases.ts) filled by the project's writer, read by a
 * service wired as `gw serve` wires it, sending through the Messages stand-in. Per release, one service:
 * an inbound text and an attachment, a tapback, an edit and an unsend (Ventura on; Big Sur and Monterey
 * have no `date_edited`, so neither can happen there), and a send whose echo row becomes no second
 * record. Behaviour is checked through the API (events, message reads, 404), not the rows' shapes.
 */
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import type { GwEvent } from "../../src/core/event.ts";
import { RELEASES, type ReleaseName, releaseColumns } from "../helpers/chatdb-releases.ts";
import { deviceService, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH } from "../helpers/service.ts";

type Device = Awaited<ReturnType<typeof deviceService>>;

/** Releases whose `message` table can record an edit or an unsend. */
const EDITS: ReadonlySet<ReleaseName> = new Set(["ventura", "sonoma", "sequoia", "tahoe"]);

async function getMessage(t: Device, id: string): Promise<{ status: number; body: Envelope }> {
  const res = await t.request("GET", `/messages/${id}`, { headers: AGENT });
  return { status: res.status, body: (await res.json()) as Envelope };
}

async function eventsOf(t: Device, messageId: string): Promise<GwEvent[]> {
  const res = await t.request("GET", "/events?limit=100", { headers: AGENT });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: GwEvent[] }).events.filter((e) => e.message_id === messageId);
}

/** The stored inbound message of a chat.db row, once the reader has taken it in. */
function storedId(t: Device, guid: string): Promise<string> {
  return waitFor(() => {
    const row = t.svc.store.db.query("SELECT id FROM messages WHERE platform_id = ?1").get(guid) as {
      id: string;
    } | null;
    return row?.id;
  }, `the message of row ${guid}`);
}

/**
 * Two later messages, each waited for: once the second is stored, the whole read of the first (its edit
 * re-check included) is over, so anything written before the first has been looked at.
 */
async function settle(t: Device): Promise<void> {
  for (const n of [1, 2]) {
    const fence = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `fence ${n}` });
    await storedId(t, fence.guid);
  }
}

function waitEvents(t: Device, messageId: string, n: number, what: string): Promise<GwEvent[]> {
  return waitFor(async () => {
    const list = await eventsOf(t, messageId);
    return list.length >= n ? list : undefined;
  }, what);
}

for (const release of RELEASES) {
  describe(release, () => {
    let t: Device;
    beforeAll(async () => {
      t = await deviceService({ release });
    });

    test("an inbound text and an attachment arrive as envelopes", async () => {
      const files = join(t.dir, "Library/Messages/Attachments/ab/01/GUID-1");
      mkdirSync(files, { recursive: true });
      writeFileSync(join(files, "photo.jpg"), "JPEGBYTES");
      const text = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `hello ${release}` });
      const photo = t.chat.writer.message({
        chatGuid: FRIEND_CHAT,
        from: FRIEND,
        text: "look",
        attachments: [
          { path: "~/Library/Messages/Attachments/ab/01/GUID-1/photo.jpg", transferName: "photo.jpg" },
        ],
      });
      const hello = await getMessage(t, await storedId(t, text.guid));
      expect(hello.status).toBe(200);
      expect(hello.body).toMatchObject({
        text: `hello ${release}`,
        channel_id: FRIEND,
        channel_type: "dm",
        direction: "inbound",
        sender: { id: FRIEND, person_id: "ann" },
        attachments: [],
      });
      const look = await getMessage(t, await storedId(t, photo.guid));
      expect(look.body.text).toBe("look");
      expect(look.body.attachments).toHaveLength(1);
      expect(look.body.attachments[0]).toMatchObject({ mime: "image/jpeg", size_bytes: 9 });
      const bytes = await t.request("GET", `/attachments/${look.body.attachments[0]?.id}`, { headers: AUTH });
      expect(await bytes.text()).toBe("JPEGBYTES");
    });

    test("a tapback is a reaction event, never an envelope", async () => {
      const target = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "like me" });
      const id = await storedId(t, target.guid);
      const tapback = t.chat.writer.message({
        chatGuid: FRIEND_CHAT,
        from: FRIEND,
        text: "Liked “like me”",
        associatedMessageType: 2001,
        associatedMessageGuid: `p:0/${target.guid}`,
      });
      const [event] = await waitEvents(t, id, 1, "the reaction event");
      expect(event).toMatchObject({
        kind: "reaction.added",
        channel_id: FRIEND,
        sender: { id: FRIEND },
        data: { emoji: "👍" },
      });
      await settle(t);
      const stored = t.svc.store.db.query("SELECT id FROM messages WHERE platform_id = ?1").get(tapback.guid);
      expect(stored).toBeNull();
    });

    if (EDITS.has(release)) {
      test("an edit changes the message's text and is an event", async () => {
        const row = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "see you at 5" });
        const id = await storedId(t, row.guid);
        t.chat.writer.edit(row.rowid, "see you at 6");
        const [event] = await waitEvents(t, id, 1, "the edit event");
        expect(event).toMatchObject({
          kind: "message.edited",
          sender: { id: FRIEND },
          data: { text: "see you at 6", previous_text: "see you at 5" },
        });
        expect((await getMessage(t, id)).body.text).toBe("see you at 6");
      });

      test("an unsend deletes the message: an event, then 404", async () => {
        const row = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "oops, wrong chat" });
        const id = await storedId(t, row.guid);
        t.chat.writer.unsend(row.rowid);
        const [event] = await waitEvents(t, id, 1, "the delete event");
        expect(event).toMatchObject({ kind: "message.deleted", sender: { id: FRIEND }, data: {} });
        expect((await getMessage(t, id)).status).toBe(404);
      });
    } else {
      test("no edit or unsend can happen: no date_edited column, and a body rewritten anyway changes nothing", async () => {
        const columns = releaseColumns(release).message ?? [];
        expect(columns).not.toContain("date_edited");
        expect(columns).not.toContain("date_retracted");
        const edited = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "kept as sent" });
        const unsent = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "kept too" });
        const editedId = await storedId(t, edited.guid);
        const unsentId = await storedId(t, unsent.guid);
        // Messages of this release never changes a row so; the writer may refuse or rewrite the body.
        const attempt = (f: () => void) => {
          try {
            f();
          } catch {}
        };
        attempt(() => t.chat.writer.edit(edited.rowid, "changed later"));
        attempt(() => t.chat.writer.unsend(unsent.rowid));
        await settle(t);
        expect(await eventsOf(t, editedId)).toEqual([]);
        expect(await eventsOf(t, unsentId)).toEqual([]);
        expect((await getMessage(t, editedId)).body.text).toBe("kept as sent");
        expect((await getMessage(t, unsentId)).body.text).toBe("kept too");
      });
    }

    test("a send lands in the chat and its echo row is linked to the one outbound record", async () => {
      const text = `on my way (${release})`;
      const res = await t.request("POST", "/messages/send", {
        headers: AUTH,
        body: { channel_id: FRIEND, text },
      });
      expect(res.status).toBe(200);
      const id = ((await res.json()) as { message_id: string }).message_id;
      const db = new Database(t.chat.path, { readonly: true });
      const echo = db
        .query("SELECT ROWID AS rowid, guid FROM message WHERE is_from_me = 1 ORDER BY ROWID DESC LIMIT 1")
        .get() as { rowid: number; guid: string };
      db.close();
      await waitFor(
        () =>
          Number(t.svc.store.cursors.get("device_messenger")?.position) >= echo.rowid ? true : undefined,
        "the reader past the echo row",
      );
      expect(t.svc.store.messages.get(id)?.platform_id).toBe(echo.guid);
      const records = t.svc.store.db
        .query("SELECT id, direction FROM messages WHERE text = ?1")
        .all(text) as { id: string; direction: string }[];
      expect(records).toEqual([{ id, direction: "outbound" }]);
      const sent = await getMessage(t, id);
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ text, direction: "outbound", channel_id: FRIEND });
    });
  });
}
