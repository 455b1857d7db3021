/**
 * Who `gw demo` simulates and what they say (pure data). One friend on both platforms (allowlisted
 * twice under one person_id, so the two sources are linked) and one stranger per platform (never
 * allowlisted). The lines alternate between iMessage and Discord, so every source and both allowlist
 * outcomes appear within the first few ticks; now and then the friend edits, unsends or reacts on each.
 */

export const FRIEND = "+15555550100";
export const STRANGER = "+15555550199";
export const FRIEND_NAME = "Demo Friend";
export const PERSON_ID = "demo-friend";

/** The Discord members (the fake gives them snowflake ids when the demo starts). */
export const DISCORD_FRIEND = { username: "demo_friend", global_name: FRIEND_NAME } as const;
export const DISCORD_STRANGER = { username: "nitro_giveaway", global_name: "Free Nitro 🎁" } as const;

export type Who = "friend" | "stranger";
/**
 * A change the friend makes to their latest message on that platform (Discord: in #general): an edit, an
 * unsend (iMessage shaped as a real Mac writes it; a delete on Discord) or a reaction (a tapback; a
 * Discord reaction).
 */
export type Change =
  | { change: "edit"; text: string }
  | { change: "unsend" }
  | { change: "react"; emoji: string };
export type DemoLine =
  | { source: "imessage"; from: Who; text: string }
  | { source: "discord"; where: "channel" | "dm"; from: Who; text: string }
  | ({ source: "imessage" | "discord"; from: "friend" } & Change);

export const SCRIPT: readonly DemoLine[] = [
  { source: "imessage", from: "friend", text: "Hey! Are we still on for lunch tomorrow?" },
  { source: "discord", where: "channel", from: "friend", text: "Morning all! The new build is up." },
  {
    source: "imessage",
    from: "stranger",
    text: "Congratulations, you won a prize! Reply with your bank details.",
  },
  {
    source: "discord",
    where: "channel",
    from: "stranger",
    text: "Free Nitro for everyone 🎁 claim it today",
  },
  { source: "imessage", from: "friend", change: "edit", text: "Hey! Are we still on for lunch on Friday?" },
  { source: "discord", from: "friend", change: "react", emoji: "🎉" },
  { source: "imessage", from: "friend", text: "I can bring the slides for Thursday 📎" },
  { source: "discord", where: "dm", from: "friend", text: "Could you look at my pull request before lunch?" },
  { source: "imessage", from: "friend", text: "oops, wrong chat, ignore that" },
  { source: "discord", from: "friend", change: "edit", text: "Morning all! The new build (v2.1) is up." },
  { source: "imessage", from: "friend", change: "unsend" },
  { source: "discord", where: "channel", from: "friend", text: "Who is joining the call at 3?" },
  {
    source: "imessage",
    from: "stranger",
    text: "Hi, this is your delivery driver, where do I leave the parcel?",
  },
  {
    source: "discord",
    where: "channel",
    from: "stranger",
    text: "DM me for a guaranteed 10x opportunity 📈",
  },
  { source: "imessage", from: "friend", text: "Also: the café on 3rd moved to noon." },
  { source: "discord", where: "channel", from: "friend", text: "test, please ignore" },
  { source: "imessage", from: "friend", change: "react", emoji: "❤️" },
  { source: "discord", from: "friend", change: "unsend" },
  { source: "imessage", from: "friend", text: "Ping me when you're free 🙂" },
  { source: "discord", where: "dm", from: "friend", text: "Thanks! 🙏" },
];

/** The stranger's card: in the owner's Contacts (gw shows the name), yet not on the allowlist. */
export const STRANGER_NAME = "Jamie Rivera";

/**
 * The demo's allowlist: the friend on iMessage and on Discord, one person. The iMessage entry gives no
 * display name: the friend's Contacts card names them (demoContacts), as on a real Mac.
 */
export function demoAllowlist(discordFriendId: string): string {
  const entry = (source: string, id: string, name: boolean) =>
    `[[entry]]\nsource = "${source}"\nid = "${id}"\nperson_id = "${PERSON_ID}"\n${name ? `display_name = "${FRIEND_NAME}"\n` : ""}`;
  return `${entry("device_messenger", FRIEND, false)}\n${entry("community_chat", discordFriendId, true)}`;
}

/** One line of text for the console: whitespace collapsed, at most `max` characters, quoted. */
export function preview(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}
