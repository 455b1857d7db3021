/**
 * What a GUILD_CREATE says about a guild's text channels and active threads (pure): each one's
 * `last_message_id`, and whether the bot may read its history, computed as Discord documents it
 * (topics/permissions; discord.js GuildChannel#permissionsFor does the same). Never throws, whatever the
 * input.
 */
import { isSnowflake } from "./snowflake.ts";

export interface GuildChannelInfo {
  /** The Discord channel or thread id. */
  id: string;
  lastMessageId: string | null;
  /** View Channel and Read Message History (and Connect, for the chat of a voice or stage channel). */
  readable: boolean;
}

export interface GuildSnapshot {
  guildId: string;
  channels: GuildChannelInfo[];
}

const ADMINISTRATOR = 1n << 3n;
const VIEW_CHANNEL = 1n << 10n;
const READ_MESSAGE_HISTORY = 1n << 16n;
const CONNECT = 1n << 20n;
const ALL = (1n << 64n) - 1n;
/** Channel types whose messages can be read: text, announcement; voice and stage chats. */
const TEXT = new Set([0, 5]);
const VOICE = new Set([2, 13]);
/** Announcement, public and private threads. */
const THREAD = new Set([10, 11, 12]);

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const records = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter(isRecord) : []);
/** A permission bit set as Discord sends it (a decimal string); anything else is none. */
const bits = (v: unknown): bigint => (typeof v === "string" && /^\d{1,20}$/.test(v) ? BigInt(v) & ALL : 0n);
const snowflakeOrNull = (v: unknown): string | null => (isSnowflake(v) ? v : null);

interface Overwrite {
  id: string;
  allow: bigint;
  deny: bigint;
}

/**
 * The bot's permissions in a channel with these overwrites, from its base permissions: the overwrites for
 * @everyone, then the member's roles, then the member.
 */
function applyOverwrites(
  base: bigint,
  overwrites: readonly Overwrite[],
  o: { guildId: string; memberId: string; roles: ReadonlySet<string> },
): bigint {
  let p = base;
  const everyone = overwrites.find((w) => w.id === o.guildId);
  if (everyone) p = (p & ~everyone.deny) | everyone.allow;
  let allow = 0n;
  let deny = 0n;
  for (const w of overwrites)
    if (w.id !== o.guildId && o.roles.has(w.id)) {
      allow |= w.allow;
      deny |= w.deny;
    }
  p = (p & ~deny) | allow;
  const member = overwrites.find((w) => w.id === o.memberId && w.id !== o.guildId);
  if (member) p = (p & ~member.deny) | member.allow;
  return p;
}

const canRead = (p: bigint, type: number) =>
  (p & VIEW_CHANNEL) !== 0n &&
  (p & READ_MESSAGE_HISTORY) !== 0n &&
  (!VOICE.has(type) || (p & CONNECT) !== 0n);

/**
 * The guild's text channels and active threads as the bot sees them, or null when unknowable (no bot
 * member in the payload, or an unavailable guild). Base permissions come from @everyone and the member's
 * roles, all of them for the owner or with Administrator; a thread has its parent's.
 */
export function readGuild(payload: unknown, botId: string): GuildSnapshot | null {
  if (!isRecord(payload) || !isSnowflake(payload.id) || payload.unavailable === true) return null;
  const guildId = payload.id;
  const member = records(payload.members).find((m) => isRecord(m.user) && m.user.id === botId);
  if (!member) return null;
  const memberRoles = new Set(
    (Array.isArray(member.roles) ? member.roles : []).filter((r): r is string => typeof r === "string"),
  );
  let base = 0n;
  for (const role of records(payload.roles))
    if (role.id === guildId || (typeof role.id === "string" && memberRoles.has(role.id)))
      base |= bits(role.permissions);
  const all = payload.owner_id === botId || (base & ADMINISTRATOR) !== 0n;
  const scope = { guildId, memberId: botId, roles: memberRoles };

  /** Permissions per guild channel id (threads look their parent up here). */
  const perms = new Map<string, { p: bigint; type: number }>();
  const channels: GuildChannelInfo[] = [];
  for (const c of records(payload.channels)) {
    if (!isSnowflake(c.id) || typeof c.type !== "number") continue;
    const overwrites = records(c.permission_overwrites).flatMap((w) =>
      typeof w.id === "string" ? [{ id: w.id, allow: bits(w.allow), deny: bits(w.deny) }] : [],
    );
    const p = all ? ALL : applyOverwrites(base, overwrites, scope);
    perms.set(c.id, { p, type: c.type });
    if (TEXT.has(c.type) || VOICE.has(c.type))
      channels.push({
        id: c.id,
        lastMessageId: snowflakeOrNull(c.last_message_id),
        readable: canRead(p, c.type),
      });
  }
  for (const t of records(payload.threads)) {
    if (!isSnowflake(t.id) || typeof t.type !== "number" || !THREAD.has(t.type)) continue;
    const parent = typeof t.parent_id === "string" ? perms.get(t.parent_id) : undefined;
    channels.push({
      id: t.id,
      lastMessageId: snowflakeOrNull(t.last_message_id),
      // A thread's messages need the parent's View Channel and Read Message History (never Connect).
      readable: parent !== undefined && canRead(parent.p, 0),
    });
  }
  return { guildId, channels };
}
