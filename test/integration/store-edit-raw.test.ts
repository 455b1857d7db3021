/**
 * Issue 29: `raw` follows edits (extensions.md §4). The message store's setText (through the read-model
 * wrapper every caller gets) writes the new text into a raw payload's string `content`, in the same
 * UPDATE; other raws (iMessage's, a tombstone's `{}`, a `content` that is not a string) stay byte for
 * byte; a delete empties raw to `{}`.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openStore } from "../../src/store/store.ts";
import { messageRow } from "../helpers/messages.ts";
import { tempDir } from "../helpers/temp.ts";

function world() {
  const store = openStore(join(tempDir(), "gw.db"));
  const rawOf = (id: string) => store.messages.get(id)?.raw;
  return { store, rawOf };
}

const discordRaw = (content: unknown) =>
  JSON.stringify({
    id: "1400000000000000099",
    channel_id: "1300000000000000001",
    author: { id: "1100000000000000001", username: "ann_user" },
    content,
    attachments: [],
    referenced_message: { message_id: "1400000000000000001" },
    edited_timestamp: null,
  });

describe("setText", () => {
  test("a Discord raw gets the new text in `content`; every other field is unchanged", () => {
    const { store, rawOf } = world();
    const m = messageRow({ source: "community_chat", text: "typo", raw: discordRaw("typo") });
    store.messages.insert(m);
    store.messages.setText(m.id, "typed");
    expect(store.messages.get(m.id)?.text).toBe("typed");
    expect(JSON.parse(rawOf(m.id) as string)).toEqual(JSON.parse(discordRaw("typed")));
    expect(Object.keys(JSON.parse(rawOf(m.id) as string))).toEqual(Object.keys(JSON.parse(discordRaw(""))));
  });

  test.each([
    ["quotes and braces", '"}, "content": "x", {"'],
    ["backslashes and newlines", "a\\b\nc\td"],
    ["unicode", "héllo 👋 \u2028"],
    ["JSON-looking text", "null"],
    ["empty", ""],
  ])("the new text is stored as a JSON string, exactly: %s", (_label, text) => {
    const { store, rawOf } = world();
    const m = messageRow({ source: "community_chat", raw: discordRaw("old") });
    store.messages.insert(m);
    store.messages.setText(m.id, text);
    expect((JSON.parse(rawOf(m.id) as string) as { content: unknown }).content).toBe(text);
  });

  test("an iMessage raw (no `content`) stays byte for byte", () => {
    const { store, rawOf } = world();
    const raw = JSON.stringify({ ROWID: 7, guid: "G-1", service: "iMessage", attachments: [] });
    const m = messageRow({ raw });
    store.messages.insert(m);
    store.messages.setText(m.id, "edited");
    expect(store.messages.get(m.id)?.text).toBe("edited");
    expect(rawOf(m.id)).toBe(raw);
  });

  test.each([
    ["a number", 5],
    ["null", null],
    ["an object", { text: "x" }],
  ])("a `content` that is %s stays as it is", (_label, content) => {
    const { store, rawOf } = world();
    const m = messageRow({ source: "community_chat", raw: discordRaw(content) });
    store.messages.insert(m);
    store.messages.setText(m.id, "edited");
    expect(rawOf(m.id)).toBe(discordRaw(content));
  });

  test("a raw that is not JSON, and a tombstone's `{}`, stay as they are", () => {
    const { store, rawOf } = world();
    const broken = messageRow({ raw: '{"content": "x"' });
    const tomb = messageRow({ raw: "{}" });
    store.messages.insert(broken);
    store.messages.insert(tomb);
    store.messages.setText(broken.id, "edited");
    store.messages.setText(tomb.id, "edited");
    expect(rawOf(broken.id)).toBe('{"content": "x"');
    expect(rawOf(tomb.id)).toBe("{}");
  });

  test("a delete after an edit empties raw and text", () => {
    const { store } = world();
    const m = messageRow({ source: "community_chat", raw: discordRaw("typo") });
    store.messages.insert(m);
    store.messages.setText(m.id, "typed");
    store.messages.markDeleted(m.id);
    expect(store.messages.get(m.id)).toMatchObject({ text: "", raw: "{}", allowlist_status: "deleted" });
  });
});
