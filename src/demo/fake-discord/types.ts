/**
 * The fake Discord's shapes: users, channels, guilds, what a test posts, and a payload as JSON. Types only,
 * read by the world (its state) and payloads.ts (what Discord sends for it) alike, so neither imports the
 * other's module for them.
 */
import type { ChannelAccess } from "./access.ts";

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  bot?: boolean;
}

export interface FakeAttachmentInput {
  filename: string;
  contentType?: string;
  data?: Uint8Array | string;
  /** Declared size override. */
  size?: number;
  /** Override the url (e.g. a dead link). */
  url?: string;
  /** The CDN answers 404. */
  expired?: boolean;
}

export interface FakeMessageInput {
  author: FakeUser;
  content?: string;
  /** Guild member nick. */
  nick?: string | null;
  /** Default 0, or 19 when replyTo is set. */
  type?: number;
  /** A message id in the same channel: a reply (type 19), sent with its `referenced_message`. */
  replyTo?: string;
  /**
   * Forwards this message (any channel): reference type 1, a snapshot of it, empty content (`content`
   * and `attachments` are ignored), type 0, as Discord sends a forward.
   */
  forward?: { channelId: string; messageId: string };
  attachments?: FakeAttachmentInput[];
  /** Default true: send MESSAGE_CREATE to sessions; false = only in history. */
  dispatch?: boolean;
  /** Epoch ms for the snowflake; default now. */
  at?: number;
}

export type Payload = Record<string, unknown>;

export interface Channel {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
  recipient?: FakeUser;
  /** A group DM's members (type 3). */
  recipients?: FakeUser[];
  /** Guild channels only (threads follow their parent); default `open`. */
  access?: ChannelAccess;
}

export interface FakeGuild {
  id: string;
  name: string;
  joinedAt: string;
  /** The bot's managed role in this guild. */
  botRoleId: string;
}
