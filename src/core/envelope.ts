/**
 * The Envelope: the one shape of a message returned over HTTP, pushed by webhook and handed to MCP.
 * The TypeBox schema is the type (Envelope = Static<typeof EnvelopeSchema>) and later drives the
 * OpenAPI document. Field rules are the spec's "Envelope" table.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ATTACHMENT_ID_PATTERN, MESSAGE_ID_PATTERN } from "./ids.ts";

export const SOURCES = ["device_messenger", "community_chat"] as const;
export type Source = (typeof SOURCES)[number];

export const SourceSchema = Type.Union([Type.Literal(SOURCES[0]), Type.Literal(SOURCES[1])], {
  description: "Message source.",
});

export const AttachmentSchema = Type.Object({
  id: Type.String({ pattern: ATTACHMENT_ID_PATTERN }),
  url: Type.String({ description: "Adapter-hosted URL: {base_url}/attachments/<attachment_id>." }),
  mime: Type.String(),
  size_bytes: Type.Integer({ minimum: 0 }),
});

export const SenderSchema = Type.Object({
  id: Type.String({ description: "Platform-native sender id." }),
  display_name: Type.String({ description: "Allowlist override if present, else the platform value." }),
  person_id: Type.Union([Type.String(), Type.Null()], { description: "Set only for allowlisted senders." }),
});

export const EnvelopeSchema = Type.Object({
  id: Type.String({ pattern: MESSAGE_ID_PATTERN }),
  source: SourceSchema,
  channel_id: Type.String(),
  channel_type: Type.Union([Type.Literal("dm"), Type.Literal("group")]),
  sender: SenderSchema,
  text: Type.String(),
  attachments: Type.Array(AttachmentSchema),
  reply_to: Type.Union([Type.String({ pattern: MESSAGE_ID_PATTERN }), Type.Null()]),
  timestamp: Type.String({ description: "RFC 3339 UTC with milliseconds (message_ts)." }),
  direction: Type.Union([Type.Literal("inbound"), Type.Literal("outbound")]),
  raw: Type.Record(Type.String(), Type.Unknown(), { description: "Platform-native payload." }),
});

export type Envelope = Static<typeof EnvelopeSchema>;
export type EnvelopeAttachment = Static<typeof AttachmentSchema>;
export type ChannelType = Envelope["channel_type"];
export type Direction = Envelope["direction"];
export type AllowlistStatus = "allowed" | "unknown" | "outbound";
