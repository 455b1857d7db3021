/**
 * The message store as the rest of gw gets it: each write to a message's text or visibility (insert,
 * insertIfNew, setText, markDeleted) also updates the read models built on messages, the search index
 * and the channel list, in the same transaction. Every such write must come through here.
 */
import type { Database } from "bun:sqlite";
import type { ChannelListStore } from "./channel-list.ts";
import type { MessageStore } from "./messages.ts";
import type { SearchIndex } from "./search-index.ts";

export function withReadModels(
  messages: MessageStore,
  models: { index: SearchIndex; channelList: ChannelListStore },
  db: Database,
): MessageStore {
  const { index, channelList } = models;
  const atomic = <T>(work: () => T): T => (db.inTransaction ? work() : db.transaction(work).immediate());
  return {
    ...messages,
    insert: (row) =>
      atomic(() => {
        messages.insert(row);
        index.added(row);
        channelList.added(row);
      }),
    insertIfNew: (row) =>
      atomic(() => {
        const stored = messages.insertIfNew(row);
        if (stored) {
          index.added(row);
          channelList.added(row);
        }
        return stored;
      }),
    setText: (id, text) =>
      atomic(() => {
        const before = messages.get(id);
        messages.setText(id, text);
        if (before) index.edited(before, text);
      }),
    markDeleted: (id) =>
      atomic(() => {
        const before = messages.get(id);
        messages.markDeleted(id);
        if (!before) return;
        index.removed(before);
        channelList.removed(before);
      }),
  };
}
