/**
 * The bad-input items for malformed chat.db input (issue 15): `attributed-body` (typedstream blobs through
 * the connector's decoder, chatdb/attributed-body.ts) and `chat-db-rows` (rows Messages never writes, read
 * by the real iMessage connector of a service wired as `gw serve` wires it, chatdb/rows.ts).
 */
import { attributedBody } from "./chatdb/attributed-body.ts";
import { chatDbRows } from "./chatdb/rows.ts";
import type { FuzzItem } from "./types.ts";

export const chatDbItems: FuzzItem[] = [attributedBody, chatDbRows];
