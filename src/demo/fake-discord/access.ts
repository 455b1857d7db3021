/**
 * What the fake Discord's bot may do in a guild (pure payload builders): `@everyone` with a subset of
 * Discord's default permissions, the bot's managed role with what its invite asked for, and a channel's
 * `access` turned into permission overwrites as a server admin would set them (topics/permissions).
 */

type Payload = Record<string, unknown>;

/** Permission bits (Discord docs, topics/permissions). */
export const PERMISSION = {
  ADD_REACTIONS: 1n << 6n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  CONNECT: 1n << 20n,
} as const;
/** What `@everyone` may do in a new server (a subset of Discord's defaults; enough for text). */
const EVERYONE_PERMISSIONS =
  PERMISSION.ADD_REACTIONS |
  PERMISSION.VIEW_CHANNEL |
  PERMISSION.SEND_MESSAGES |
  PERMISSION.EMBED_LINKS |
  PERMISSION.ATTACH_FILES |
  PERMISSION.READ_MESSAGE_HISTORY |
  PERMISSION.CONNECT;
/** The bot's managed role: what its invite link asked for. */
const BOT_ROLE_PERMISSIONS =
  PERMISSION.VIEW_CHANNEL | PERMISSION.SEND_MESSAGES | PERMISSION.READ_MESSAGE_HISTORY;

/**
 * What the bot may do in a guild channel (threads inherit their parent's): `open` (the default),
 * `private` (hidden from @everyone, the bot's role let in), `hidden` (hidden from @everyone, the bot
 * not let in), `no-history` (visible, but the bot's member may not read history).
 */
export type ChannelAccess = "open" | "private" | "hidden" | "no-history";

const role = (id: string, name: string, permissions: bigint, extra: Payload = {}): Payload => ({
  id,
  name,
  permissions: String(permissions),
  position: 0,
  color: 0,
  hoist: false,
  managed: false,
  mentionable: false,
  flags: 0,
  ...extra,
});

/** A guild's roles: `@everyone` (its id is the guild's) and the bot's managed role. */
export function guildRoles(g: {
  guildId: string;
  botRoleId: string;
  botId: string;
  botName: string;
}): Payload[] {
  return [
    role(g.guildId, "@everyone", EVERYONE_PERMISSIONS),
    role(g.botRoleId, g.botName, BOT_ROLE_PERMISSIONS, {
      position: 1,
      managed: true,
      tags: { bot_id: g.botId },
    }),
  ];
}

/** The permission overwrites that give the bot this access. */
export function overwritesFor(
  access: ChannelAccess,
  g: { guildId: string; botRoleId: string; botId: string },
): Payload[] {
  const hideFromEveryone = { id: g.guildId, type: 0, allow: "0", deny: String(PERMISSION.VIEW_CHANNEL) };
  switch (access) {
    case "open":
      return [];
    case "hidden":
      return [hideFromEveryone];
    case "private":
      return [
        hideFromEveryone,
        {
          id: g.botRoleId,
          type: 0,
          allow: String(PERMISSION.VIEW_CHANNEL | PERMISSION.READ_MESSAGE_HISTORY),
          deny: "0",
        },
      ];
    case "no-history":
      return [{ id: g.botId, type: 1, allow: "0", deny: String(PERMISSION.READ_MESSAGE_HISTORY) }];
  }
}
