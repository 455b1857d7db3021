/**
 * A row as the chat.db reader returns it (ChatDbRow), for tests that hand rows to the pure read planner
 * without a file: a plain incoming iMessage text, guid `G<rowid>`, from +15555550100 in its one-to-one
 * chat any;-;+15555550100, dated `dateMs`, every optional column NULL or 0; `over` sets any column.
 */
import type { ChatDbRow } from "../../src/connectors/device-messenger/chat-db.ts";

export function chatDbRow(rowid: number, dateMs: number, over: Partial<ChatDbRow> = {}): ChatDbRow {
  return {
    rowid,
    guid: `G${rowid}`,
    text: `text ${rowid}`,
    body: null,
    handle: "+15555550100",
    service: "iMessage",
    account: null,
    is_from_me: 0,
    date_ms: dateMs,
    date_raw: null,
    item_type: 0,
    associated_message_type: 0,
    associated_message_guid: null,
    associated_message_emoji: null,
    date_edited: null,
    date_retracted: null,
    summary: null,
    balloon_bundle_id: null,
    thread_originator_guid: null,
    is_empty: 0,
    chat_guid: "any;-;+15555550100",
    chat_style: 45,
    chat_identifier: "+15555550100",
    chat_service: "iMessage",
    ...over,
  };
}
