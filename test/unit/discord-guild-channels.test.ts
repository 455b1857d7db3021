/** Reading a GUILD_CREATE for catch-up: which channels and threads the bot can read, by Discord's rules. */
import { describe, expect, test } from "bun:test";
import { readGuild } from "../../src/connectors/community-chat/guild-channels.ts";

const GUILD = "900000000000000001";
const BOT = "900000000000000002";
const BOT_ROLE = "900000000000000003";
const MOD_ROLE = "900000000000000004";
const VIEW = 1n << 10n;
const HISTORY = 1n << 16n;
const CONNECT = 1n << 20n;
const ADMIN = 1n << 3n;
const str = (n: bigint) => String(n);
/** Channel ids 910000000000000001… */
const ch = (n: number) => String(910000000000000000n + BigInt(n));

function guild(
  over: {
    everyone?: bigint;
    botRole?: bigint;
    ownerId?: string;
    memberRoles?: string[];
    channels?: unknown[];
    threads?: unknown[];
    members?: unknown[];
  } = {},
) {
  return {
    id: GUILD,
    owner_id: over.ownerId ?? "900000000000000009",
    roles: [
      { id: GUILD, permissions: str(over.everyone ?? VIEW | HISTORY) },
      { id: BOT_ROLE, permissions: str(over.botRole ?? 0n) },
      { id: MOD_ROLE, permissions: str(ADMIN) },
    ],
    members: over.members ?? [{ user: { id: BOT }, roles: over.memberRoles ?? [BOT_ROLE] }],
    channels: over.channels ?? [],
    threads: over.threads ?? [],
  };
}
const text = (n: number, overwrites: object[] = [], extra: object = {}) => ({
  id: ch(n),
  type: 0,
  last_message_id: ch(1000 + n),
  permission_overwrites: overwrites,
  ...extra,
});
const ow = (id: string, allow: bigint, deny: bigint) => ({ id, type: 0, allow: str(allow), deny: str(deny) });
const readable = (payload: unknown) =>
  Object.fromEntries((readGuild(payload, BOT)?.channels ?? []).map((c) => [c.id, c.readable]));

describe("readGuild", () => {
  test("base permissions come from @everyone and the bot's roles", () => {
    expect(readable(guild({ channels: [text(1)] }))).toEqual({ [ch(1)]: true });
    expect(readable(guild({ everyone: 0n, channels: [text(1)] }))).toEqual({ [ch(1)]: false });
    expect(readable(guild({ everyone: 0n, botRole: VIEW | HISTORY, channels: [text(1)] }))).toEqual({
      [ch(1)]: true,
    });
    // View without history is not enough.
    expect(readable(guild({ everyone: VIEW, channels: [text(1)] }))).toEqual({ [ch(1)]: false });
  });

  test("overwrites apply @everyone, then the roles together, then the member", () => {
    const r = readable(
      guild({
        channels: [
          text(1, [ow(GUILD, 0n, VIEW)]),
          text(2, [ow(GUILD, 0n, VIEW), ow(BOT_ROLE, VIEW, 0n)]),
          text(3, [ow(GUILD, 0n, VIEW), ow(BOT_ROLE, VIEW, 0n), { ...ow(BOT, 0n, HISTORY), type: 1 }]),
          text(4, [ow(BOT_ROLE, 0n, VIEW), { ...ow(BOT, VIEW, 0n), type: 1 }]),
          // A role overwrite for a role the bot does not have changes nothing.
          text(5, [ow(GUILD, 0n, VIEW), ow(MOD_ROLE, VIEW, 0n)]),
        ],
      }),
    );
    expect(r).toEqual({ [ch(1)]: false, [ch(2)]: true, [ch(3)]: false, [ch(4)]: true, [ch(5)]: false });
  });

  test("the owner and Administrator read everything, whatever the overwrites", () => {
    const hidden = [text(1, [ow(GUILD, 0n, VIEW | HISTORY), { ...ow(BOT, 0n, VIEW), type: 1 }])];
    expect(readable(guild({ ownerId: BOT, channels: hidden }))).toEqual({ [ch(1)]: true });
    expect(readable(guild({ memberRoles: [BOT_ROLE, MOD_ROLE], channels: hidden }))).toEqual({
      [ch(1)]: true,
    });
  });

  test("threads take their parent's permissions; voice and stage chats also need Connect", () => {
    const r = readable(
      guild({
        everyone: VIEW | HISTORY,
        channels: [
          text(1),
          text(2, [ow(GUILD, 0n, VIEW)]),
          { id: ch(3), type: 2, last_message_id: null, permission_overwrites: [] },
          { id: ch(4), type: 13, last_message_id: null, permission_overwrites: [ow(GUILD, CONNECT, 0n)] },
        ],
        threads: [
          { id: ch(11), type: 11, parent_id: ch(1), last_message_id: ch(2011) },
          { id: ch(12), type: 12, parent_id: ch(2), last_message_id: ch(2012) },
          { id: ch(13), type: 11, parent_id: ch(99), last_message_id: ch(2013) },
        ],
      }),
    );
    expect(r).toEqual({
      [ch(1)]: true,
      [ch(2)]: false,
      [ch(3)]: false,
      [ch(4)]: true,
      [ch(11)]: true,
      [ch(12)]: false,
      [ch(13)]: false,
    });
  });

  test("last message ids are kept; categories, forums and unknown types are left out", () => {
    const g = readGuild(
      guild({
        channels: [
          text(1),
          text(2, [], { last_message_id: null }),
          text(3, [], { last_message_id: "garbage" }),
          { id: ch(4), type: 4 },
          { id: ch(5), type: 15, permission_overwrites: [] },
          { id: ch(6), type: 99 },
        ],
      }),
      BOT,
    );
    expect(g?.guildId).toBe(GUILD);
    expect(g?.channels).toEqual([
      { id: ch(1), lastMessageId: ch(1001), readable: true },
      { id: ch(2), lastMessageId: null, readable: true },
      { id: ch(3), lastMessageId: null, readable: true },
    ]);
  });

  test("unknowable or malformed payloads: null or fewer channels, never a throw", () => {
    expect(readGuild(null, BOT)).toBeNull();
    expect(readGuild({ id: GUILD, unavailable: true }, BOT)).toBeNull();
    expect(readGuild(guild({ members: [] }), BOT)).toBeNull();
    expect(readGuild(guild({ members: [{ user: null }, "x"] }), BOT)).toBeNull();
    expect(readGuild({ ...guild(), channels: "a string", threads: 7, roles: null }, BOT)).toEqual({
      guildId: GUILD,
      channels: [],
    });
    const odd = guild({
      channels: [
        null,
        { id: 5, type: 0 },
        { ...text(1), permission_overwrites: [null, { id: 3 }, { id: GUILD, deny: "-1" }] },
      ],
    });
    expect(readGuild(odd, BOT)?.channels).toEqual([{ id: ch(1), lastMessageId: ch(1001), readable: true }]);
    const badRoles = {
      ...guild(),
      roles: [
        { id: GUILD, permissions: 1024 },
        { id: GUILD, permissions: "1e9" },
      ],
    };
    expect(readGuild({ ...badRoles, channels: [text(1)] }, BOT)?.channels[0]?.readable).toBe(false);
  });
});
