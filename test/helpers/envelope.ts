/**
 * An inbound envelope as gw serve delivers it (one allowlisted Discord message), with overrides; for
 * tests and for bench/receiver.ts. Ids are real `msg_` ULIDs unless given. Imports nothing of bun:test.
 */
import type { Envelope } from "../../src/core/envelope.ts";
import { createIdFactory } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/ports.ts";

const ids = createIdFactory(systemClock);

export function envelopeOf(overrides: Partial<Envelope> = {}): Envelope {
  return {
    id: ids.message(),
    source: "community_chat",
    channel_id: "community_chat:channel:1300000000000000001",
    channel_type: "group",
    sender: { id: "1100000000000000001", display_name: "Ann", person_id: "ann" },
    text: "hello",
    attachments: [],
    reply_to: null,
    timestamp: new Date().toISOString(),
    direction: "inbound",
    raw: {},
    ...overrides,
  };
}
