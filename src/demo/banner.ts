/**
 * What `gw demo` prints once it runs (pure): what is simulated, the token, ready-to-paste curl lines for
 * both platforms, and where the webhook and reply lines will appear.
 */
import { DISCORD_FRIEND, DISCORD_STRANGER, FRIEND, FRIEND_NAME, STRANGER } from "./script.ts";

export interface BannerInfo {
  base: string;
  token: string;
  chatDb: string;
  intervalMs: number;
  /** gw's channel id of the Discord channel #general. */
  discordChannelId: string;
  webhookUrl: string;
}

export function banner(b: BannerInfo): string {
  const h = `-H "Authorization: Bearer ${b.token}"`;
  const send = (channel: string, text: string) =>
    `  curl -s ${h} -H "Content-Type: application/json" -H "Idempotency-Key: $(uuidgen 2>/dev/null || date +%s%N)" \\
    -d '{"channel_id": "${channel}", "text": "${text}"}' ${b.base}/messages/send`;
  return `
gw demo is running at ${b.base}
Two simulated platforms take turns sending a message every ${b.intervalMs / 1000} s:
  iMessage  a demo chat.db with Messages' schema. "${FRIEND_NAME}" (${FRIEND}) is on the allowlist, the
            stranger (${STRANGER}) is quarantined. Replies you send land back in that chat.db.
  Discord   a built-in fake Discord, server "gw demo": in #general ${FRIEND_NAME} (@${DISCORD_FRIEND.username},
            allowlisted as the same person as on iMessage) and @${DISCORD_STRANGER.username} (quarantined)
            talk; ${FRIEND_NAME} also writes to the bot in a DM. gw's real Discord connector is logged in.

  export GW_BEARER_TOKEN=${b.token}

Read what your agent would see (both platforms):
  curl -s ${h} -H "X-Agent-ID: me" ${b.base}/messages/unread

See who is quarantined:
  curl -s ${h} ${b.base}/messages/quarantine

Reply to the friend on iMessage:
${send(FRIEND, "Sounds good!")}

Post in the Discord channel #general:
${send(b.discordChannelId, "Hello from my agent!")}

Search both platforms (full text; words only):
  curl -s ${h} -H "X-Agent-ID: me" "${b.base}/messages/search?q=lunch"

React 👍 on Discord to ${FRIEND_NAME}'s message about the new build (its id found by search):
  ID=$(curl -s ${h} -H "X-Agent-ID: me" "${b.base}/messages/search?q=build&source=community_chat" | grep -o 'msg_[0-9A-Z]*' | head -1)
  curl -s ${h} -H "Content-Type: application/json" -d "{\\"message_id\\": \\"$ID\\", \\"emoji\\": \\"👍\\"}" ${b.base}/messages/react

Mark everything read (ids from the unread answer):
  curl -s ${h} -H "X-Agent-ID: me" -H "Content-Type: application/json" \\
    -d '{"message_ids": ["msg_..."]}' ${b.base}/messages/mark_read

Webhooks: each allowlisted message is POSTed, signed, to a built-in receiver at
${b.webhookUrl}, which checks it as \`gw receiver\` does and prints a "webhook" line below.
What you send shows below too: "imessage" lines (written into the demo chat.db by the Messages
stand-in) and "discord" lines (posted on the fake Discord).

Health: curl -s ${b.base}/healthz     API docs: ${b.base}/docs (with the bearer)
Demo chat.db: ${b.chatDb}
Press Ctrl-C to stop.

`;
}
