/**
 * Builders for normalised inbound messages, a store + ingest wired as `gw serve` wires them, and
 * seedStore: messages stored in the files a gw process is about to open, as `gw serve` would have.
 */

import { join } from "node:path";
import { type AllowlistEntry, buildAllowlist } from "../../src/allowlist/parse.ts";
import { createIdFactory } from "../../src/core/ids.ts";
import { type Clock, systemClock } from "../../src/core/ports.ts";
import type { StoredEvent } from "../../src/ingest/changes.ts";
import { createIngest, type NormalizedMessage } from "../../src/ingest/ingest.ts";
import type { MessageRow } from "../../src/store/messages.ts";
import { openStore } from "../../src/store/store.ts";
import { recordingLogger } from "./logger.ts";
import { tempDir } from "./temp.ts";

let counter = 0;

export function inbound(overrides: Partial<NormalizedMessage> = {}): NormalizedMessage {
  counter += 1;
  return {
    source: "device_messenger",
    platformId: `guid-${counter}-${crypto.randomUUID()}`,
    channel: { id: "+15555550100", type: "dm", platformRef: "any;-;+15555550100" },
    sender: { id: "+15555550100", displayName: "+15555550100" },
    // Every real Messages row names its service; iMessage is what an allowlist entry trusts by default.
    service: "iMessage",
    text: `hello ${counter}`,
    replyToPlatformId: null,
    timestampMs: Date.UTC(2026, 0, 1) + counter * 1000,
    attachments: [],
    raw: { ROWID: counter },
    direction: "inbound",
    ...overrides,
  };
}

/** A manual clock: tests move time instead of sleeping. */
export function manualClock(start = Date.UTC(2026, 5, 1)): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

export const FRIEND: AllowlistEntry = {
  source: "device_messenger",
  id: "+15555550100",
  person_id: "friend",
  display_name: "Friend",
};

export function storeWithIngest(
  opts: { entries?: AllowlistEntry[]; webhooks?: boolean; webhookKinds?: string[] } = {},
) {
  const dir = tempDir();
  const store = openStore(join(dir, "gw.db"));
  const clock = manualClock();
  const log = recordingLogger();
  let allowlist = buildAllowlist(opts.entries ?? [FRIEND]);
  const ids = createIdFactory(clock);
  const announced: StoredEvent[] = [];
  const ingest = createIngest({
    store,
    allowlist: () => allowlist,
    ids,
    clock,
    webhooksEnabled: opts.webhooks ?? true,
    ...(opts.webhookKinds ? { webhookKinds: new Set(opts.webhookKinds) } : {}),
    attachmentDir: join(dir, "attachments"),
    log,
    announceEvents: (events) => void announced.push(...events),
  });
  return {
    dir,
    store,
    clock,
    log,
    ids,
    ingest,
    announced,
    setAllowlist: (entries: AllowlistEntry[]) => {
      allowlist = buildAllowlist(entries);
    },
  };
}

let rows = 0;
/** A stored message row as the message store takes it (ids, platform ids and times ascend per call). */
export function messageRow(over: Partial<MessageRow> = {}): MessageRow {
  rows += 1;
  return {
    id: `msg_${String(rows).padStart(26, "0")}`,
    source: "device_messenger",
    platform_id: `p${rows}`,
    channel_id: "+15555550100",
    channel_type: "dm",
    sender_id: "+15555550100",
    sender_name: "Friend",
    person_id: null,
    text: `word${rows}`,
    reply_to: null,
    message_ts: rows,
    direction: "inbound",
    allowlist_status: "allowed",
    raw: "{}",
    created_at: rows,
    ...over,
  };
}

/**
 * Stores `messages` (from iMessage) in the database a gw process is about to open (`env`'s GW_DB_PATH and
 * GW_ATTACHMENT_DIR) through the real ingest on the system clock, as `gw serve` would have stored them,
 * then closes it; returns their ids. The allowlist is `entries` (the friend by default); `webhooks`
 * queues a delivery for each allowed message.
 */
export function seedStore(
  env: Record<string, string>,
  messages: NormalizedMessage[],
  opts: { webhooks: boolean; entries?: AllowlistEntry[]; cursor?: string | null },
): string[] {
  const store = openStore(env.GW_DB_PATH as string);
  try {
    const ingest = createIngest({
      store,
      allowlist: () => buildAllowlist(opts.entries ?? [FRIEND]),
      ids: createIdFactory(systemClock),
      clock: systemClock,
      webhooksEnabled: opts.webhooks,
      attachmentDir: env.GW_ATTACHMENT_DIR as string,
      log: recordingLogger(),
    });
    return ingest({ source: "device_messenger", messages, cursor: opts.cursor ?? null }).map((o) => o.id);
  } finally {
    store.close();
  }
}
