/**
 * The demo's Discord: the fake Discord (./fake-discord, shipped for the demo only) on 127.0.0.1 with a
 * server "gw demo", a #general text channel, the two members of script.ts and a DM between the bot and
 * the friend. gw's real Discord connector logs in to it with `token` at `apiUrl`, exactly as `gw serve`
 * would. `post` speaks as a member (a live MESSAGE_CREATE); every message the bot posts through REST is
 * handed to `onPost` with a readable place name.
 */
import { CHANNEL_PREFIX } from "../connectors/community-chat/mapping.ts";
import { type FakeUser, startFakeDiscord } from "./fake-discord/server.ts";
import { DISCORD_FRIEND, DISCORD_STRANGER, type Who } from "./script.ts";

/** The bot token the demo's fake Discord accepts (not a real Discord token). */
export const DEMO_BOT_TOKEN = "gw-demo.not-a-real-discord-token";
/** Discord's own heartbeat interval, so the demo's gateway behaves like the real one. */
const HEARTBEAT_INTERVAL_MS = 41_250;

/** A message posted on the fake Discord: its id and its channel's. */
export interface Posted {
  id: string;
  channelId: string;
}

export interface DiscordScene {
  token: string;
  apiUrl: string;
  friend: FakeUser;
  stranger: FakeUser;
  /** gw's channel id of #general (what /messages/send takes). */
  channelId: string;
  /** A short name for one of the scene's gw channel ids (`#general`, `DM @demo_friend`), else null. */
  label(gwChannelId: string): string | null;
  /** Posts as a member; the posted message's Discord ids. */
  post(where: "channel" | "dm", from: Who, text: string): Posted;
  /** The friend edits, reacts to or deletes one of their messages. */
  edit(m: Posted, text: string): void;
  react(m: Posted, emoji: string): void;
  remove(m: Posted): void;
  stop(): Promise<void>;
}

export async function startDiscordScene(opts: {
  onPost: (post: { place: string; author: string; content: string }) => void;
}): Promise<DiscordScene> {
  const names = new Map<string, string>();
  const fake = await startFakeDiscord({
    token: DEMO_BOT_TOKEN,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    botName: "gw-demo-bot",
    onPost: ({ channelId, message }) =>
      opts.onPost({
        place: names.get(channelId) ?? channelId,
        author: fake.bot.username,
        content: String(message.content ?? ""),
      }),
  });
  const guild = fake.guild({ name: "gw demo" });
  const general = fake.channel(guild.id, { name: "general" });
  const friend = fake.user(DISCORD_FRIEND);
  const stranger = fake.user(DISCORD_STRANGER);
  const dm = fake.dm(friend);
  names.set(general.id, "#general");
  names.set(dm.id, `DM @${friend.username}`);
  const labels = new Map([
    [`${CHANNEL_PREFIX.channel}${general.id}`, "#general"],
    [`${CHANNEL_PREFIX.dm}${dm.id}`, `DM @${friend.username}`],
  ]);

  return {
    token: DEMO_BOT_TOKEN,
    apiUrl: fake.apiUrl,
    friend,
    stranger,
    channelId: `${CHANNEL_PREFIX.channel}${general.id}`,
    label: (id) => labels.get(id) ?? null,
    post(where, from, text) {
      const channelId = where === "dm" ? dm.id : general.id;
      const m = fake.message(channelId, { author: from === "friend" ? friend : stranger, content: text });
      return { id: m.id as string, channelId };
    },
    edit: (m, text) => void fake.edit(m.channelId, m.id, text),
    react: (m, emoji) => fake.react(m.channelId, m.id, friend, emoji),
    remove: (m) => fake.remove(m.channelId, [m.id]),
    stop: () => fake.stop(),
  };
}
