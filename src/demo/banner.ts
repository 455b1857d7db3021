/**
 * What `gw demo` prints once it runs (pure): what is simulated, the token, ready-to-paste curl lines for
 * both platforms, and where the webhook and reply lines will appear.
 */
import { DISCORD_FRIEND, DISCORD_STRANGER, FRIEND, FRIEND_NAME, STRANGER, STRANGER_NAME } from "./script.ts";

export interface BannerInfo {
  base: string;
  token: string;
  chatDb: string;
  /** The demo's state database and allowlist: what `gw quarantine` and `gw allow` must read. */
  dbPath: string;
  allowlistPath: string;
  /** The demo's Contacts folder (names for the numbers). */
  contactsDir: string;
  /** How to run this very program (`bun <src/main.ts>` from source, or the binary). */
  gw: readonly string[];
  intervalMs: number;
  /** gw's channel id of the Discord channel #general. */
  discordChannelId: string;
  /** Where webhooks go: the built-in receiver, or the user's own (`--webhook-url`), and their secret. */
  webhook: { url: string; secret: string; own: boolean };
}

/** A word as the shell takes it (quoted unless it is plainly safe), and an alias's value (always quoted). */
const alias = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;
const quote = (a: string) => (/^[\w./:@+=-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);

/** The webhook lines: the built-in receiver's, or how to feed a real `gw receiver` on `--webhook-url`. */
function webhookLines(b: BannerInfo): string {
  if (!b.webhook.own)
    return `Webhooks: each allowlisted message, edit, unsend and reaction is POSTed, signed, to a built-in receiver
at ${b.webhook.url}, which checks it as \`gw receiver\` does and prints a "webhook" line below. To
feed a real \`gw receiver\` (an agent run per message) instead, start the demo with
--webhook-url http://127.0.0.1:8090/webhook and follow the lines it prints.`;
  const port = /:(\d+)\//.exec(b.webhook.url)?.[1] ?? "8090";
  return `Webhooks: each allowlisted message, edit, unsend and reaction is POSTed, signed, to ${b.webhook.url}.
Run a real receiver there, in another terminal (GW_RECEIVER_AGENT_BIN picks the agent, Claude Code by
default; see the README's "Agents that answer"):
  export GW_WEBHOOK_SECRET=${b.webhook.secret}
  GW_BEARER_TOKEN=${b.token} GW_BASE_URL=${b.base} GW_RECEIVER_BIND_PORT=${port} \\
    ${b.gw.map(quote).join(" ")} receiver`;
}

export function banner(b: BannerInfo): string {
  const h = `-H "Authorization: Bearer ${b.token}"`;
  const agent = `${h} -H "X-Agent-ID: me"`;
  const send = (channel: string, text: string) =>
    `  curl -s ${h} -H "Content-Type: application/json" -H "Idempotency-Key: $(uuidgen 2>/dev/null || date +%s%N)" \\
    -d '{"channel_id": "${channel}", "text": "${text}"}' ${b.base}/messages/send`;
  const firstId = (answer: string) => `$(${answer} | grep -o 'msg_[0-9A-Z]*' | head -1)`;
  const json = (body: string) => `-H "Content-Type: application/json" -d "${body.replaceAll('"', '\\"')}"`;
  return `
gw demo is running at ${b.base}
Two simulated platforms take turns sending a message every ${b.intervalMs / 1000} s:
  iMessage  a demo chat.db with Messages' schema. "${FRIEND_NAME}" (${FRIEND}) is on the allowlist, the
            stranger ${STRANGER_NAME} (${STRANGER}) is quarantined; both are in a demo Contacts folder,
            so gw names them. Replies you send land back in that chat.db.
  Discord   a built-in fake Discord, server "gw demo": in #general ${FRIEND_NAME} (@${DISCORD_FRIEND.username},
            allowlisted as the same person as on iMessage) and @${DISCORD_STRANGER.username} (quarantined)
            talk; ${FRIEND_NAME} also writes to the bot in a DM.
  Now and then ${FRIEND_NAME} edits, unsends or reacts, on both. gw's real connectors read all of it.

  export GW_BEARER_TOKEN=${b.token}

Read what your agent would see (both platforms):
  curl -s ${agent} ${b.base}/messages/unread

Follow edits, unsends and reactions (waits up to 30 s for the next one):
  curl -s ${agent} "${b.base}/events?wait=30"

See who is quarantined:
  curl -s ${h} ${b.base}/messages/quarantine

Reply to the friend on iMessage:
${send(FRIEND, "Sounds good!")}

Post in the Discord channel #general:
${send(b.discordChannelId, "Hello from my agent!")}

Post in #general, then edit what you posted (gw's own Discord message):
  ID=${firstId(send(b.discordChannelId, "Helo from my agent").trim())}
  curl -s ${h} ${json(`{"message_id": "$ID", "text": "Hello from my agent (edited)"}`)} ${b.base}/messages/edit

Search both platforms (full text; words only):
  curl -s ${agent} "${b.base}/messages/search?q=lunch"

React 👍 on Discord to ${FRIEND_NAME}'s message about the new build (its id found by search):
  ID=${firstId(`curl -s ${agent} "${b.base}/messages/search?q=build&source=community_chat"`)}
  curl -s ${h} ${json(`{"message_id": "$ID", "emoji": "👍"}`)} ${b.base}/messages/react

Mark the oldest unread message read (its id from the unread answer):
  ID=${firstId(`curl -s ${agent} ${b.base}/messages/unread`)}
  curl -s ${agent} ${json(`{"message_ids": ["$ID"]}`)} ${b.base}/messages/mark_read

Let the stranger through, as on a real Mac (in another terminal; these commands read this demo's files):
  export GW_DB_PATH=${b.dbPath} GW_ALLOWLIST_PATH=${b.allowlistPath} \\
    GW_CONTACTS_DIR=${b.contactsDir} GW_DEFAULT_REGION=US
  alias gw=${alias(b.gw.map(quote).join(" "))}
  gw quarantine
  gw allow device_messenger '${STRANGER_NAME}' --person stranger
(a Contacts name will do when it matches one card: all its numbers and e-mails are allowed; the demo
reloads its allowlist at once, and the stranger's next messages reach agents).

${webhookLines(b)}
What you send shows below: "imessage" lines (written into the demo chat.db by the Messages stand-in)
and "discord" lines (posted on the fake Discord).

Health: curl -s ${b.base}/healthz     API docs: ${b.base}/docs (with the bearer)
Demo chat.db: ${b.chatDb}
Press Ctrl-C to stop.

`;
}
