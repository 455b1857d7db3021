/**
 * Plays the demo's script (script.ts) one line per tick: a message from the friend or the stranger on
 * iMessage (written into the demo chat.db) or Discord (posted on the fake Discord), or a change the friend
 * makes to their latest message on that platform (an edit, an unsend, a tapback or reaction), so events
 * show up as well. A line that cannot be played now (the chat.db busy) is tried again at the next tick.
 */
import type { Logger } from "../core/ports.ts";
import type { ChatDbWriter } from "./chatdb-writer.ts";
import type { DiscordScene, Posted } from "./discord-scene.ts";
import { type Change, type DemoLine, FRIEND, SCRIPT, STRANGER } from "./script.ts";

/** The friend's latest message on each platform (a change applies to it). */
interface Latest {
  imessage: { rowid: number; guid: string } | null;
  discord: Posted | null;
}

/** An iMessage tapback for an emoji (love, like, laugh; else the custom-emoji kind). */
const TAPBACK: Record<string, number> = { "❤️": 2000, "👍": 2001, "😂": 2003 };

function changeIMessage(writer: ChatDbWriter, latest: Latest, c: Change): void {
  const m = latest.imessage;
  if (!m) return;
  const chatGuid = `any;-;${FRIEND}`;
  if (c.change === "edit") writer.edit(m.rowid, c.text);
  else if (c.change === "unsend") {
    writer.unsend(m.rowid);
    latest.imessage = null;
  } else
    writer.message({
      chatGuid,
      from: FRIEND,
      text: "",
      associatedMessageType: TAPBACK[c.emoji] ?? 2006,
      associatedMessageGuid: `p:0/${m.guid}`,
      ...(TAPBACK[c.emoji] ? {} : { associatedMessageEmoji: c.emoji }),
    });
}

function changeDiscord(discord: DiscordScene, latest: Latest, c: Change): void {
  const m = latest.discord;
  if (!m) return;
  if (c.change === "edit") discord.edit(m, c.text);
  else if (c.change === "react") discord.react(m, c.emoji);
  else {
    discord.remove(m);
    latest.discord = null;
  }
}

function play(line: DemoLine, s: { discord: DiscordScene; writer: ChatDbWriter; latest: Latest }): void {
  if ("change" in line) {
    if (line.source === "imessage") changeIMessage(s.writer, s.latest, line);
    else changeDiscord(s.discord, s.latest, line);
    return;
  }
  if (line.source === "discord") {
    const posted = s.discord.post(line.where, line.from, line.text);
    if (line.from === "friend" && line.where === "channel") s.latest.discord = posted;
    return;
  }
  const from = line.from === "friend" ? FRIEND : STRANGER;
  const written = s.writer.message({ chatGuid: `any;-;${from}`, from, text: line.text });
  if (line.from === "friend") s.latest.imessage = written;
}

/** Plays the script from its first line, one line now and one per `intervalMs`; returns the stop. */
export function runScript(
  discord: DiscordScene,
  writer: ChatDbWriter,
  intervalMs: number,
  log: Logger,
): () => void {
  let n = 0;
  const latest: Latest = { imessage: null, discord: null };
  const tick = () => {
    const line = SCRIPT[n % SCRIPT.length];
    if (!line) return;
    try {
      play(line, { discord, writer, latest });
      n += 1;
    } catch (err) {
      // Busy past its timeout (e.g. the stand-in writing a reply): this line goes out on the next tick.
      log.warn({ err: String(err) }, "demo: could not play the next simulated message; trying again");
    }
  };
  tick();
  const generator = setInterval(tick, intervalMs);
  return () => clearInterval(generator);
}
