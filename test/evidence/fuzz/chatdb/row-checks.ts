/**
 * What `chat-db-rows` checks after a round: every envelope of an API answer well formed (`envelopeProblem`),
 * and every bad row the store took carrying only what its chat.db row has (`checkStored`): text of type
 * text from its text column or its decoded attributedBody, placeholders dropped (the text column first when
 * it has visible characters), a timestamp that can be shown, and only its own visible attachments.
 */
import type { Database } from "bun:sqlite";
import { decodeAttributedBody } from "../../../../src/connectors/device-messenger/typedstream.ts";
import type { ChatDb, Written } from "./chat-db.ts";
import { strip } from "./decode-check.ts";
import { utf8 } from "./typedstream-bytes.ts";

/** Prints a row spec with bytes as hex and long strings cut, for a failure message. */
export const show = (x: unknown): string =>
  JSON.stringify(x, (_k, v) => {
    if (v instanceof Uint8Array) return `hex:${Buffer.from(v).toString("hex").slice(0, 80)}`;
    if (typeof v === "bigint") return `${v}n`;
    if (typeof v === "string" && v.length > 60) return `${v.slice(0, 40)}…(${v.length} chars)`;
    if (typeof v === "number" && !Number.isFinite(v)) return String(v);
    return v;
  });

/** What the connector may deliver for a row, from the row as SQLite holds it (read back by the writer). */
function textsOf(stored: { t: unknown; tt: string; b: unknown; bt: string }) {
  const text =
    stored.tt === "text"
      ? (stored.t as string)
      : stored.tt === "blob"
        ? new TextDecoder().decode(stored.t as Uint8Array)
        : stored.tt === "null"
          ? null
          : String(stored.t);
  const bodyBytes =
    stored.bt === "blob" ? (stored.b as Uint8Array) : stored.bt === "text" ? utf8(stored.b as string) : null;
  const body = bodyBytes ? decodeAttributedBody(bodyBytes) : null;
  return { text, body };
}

const FIRST_DATE_MS = -62_135_596_800_000;
const LAST_DATE_MS = 253_402_300_799_999;
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Problems with one envelope of an API answer. */
export function envelopeProblem(m: Record<string, unknown>): string | null {
  const sender = m.sender as Record<string, unknown> | undefined;
  if (typeof m.id !== "string" || typeof m.text !== "string" || typeof m.channel_id !== "string")
    return `id, text or channel_id is not a string: ${show(m)}`;
  if (typeof sender?.id !== "string") return `sender.id is not a string: ${show(m)}`;
  if (typeof m.timestamp !== "string" || !RFC3339_MS.test(m.timestamp))
    return `timestamp ${show(m.timestamp)} is not YYYY-MM-DDTHH:MM:SS.mmmZ`;
  if (!Array.isArray(m.attachments)) return `attachments is not an array: ${show(m)}`;
  return null;
}

type StoredRow = { id: string; text: unknown; tt: string; ts: number; ct: string; st: string; rowid: number };

/** Each bad row of `written` the store holds carries only what the row has; counts those and attachments. */
export function checkStored(
  o: { store: Database; c: ChatDb; where: string; fail: (f: string) => void },
  written: Written[],
  counts: { stored: number; withAttachments: number },
): void {
  const { store, c, where, fail } = o;
  const stored = store
    .query(
      `SELECT id, text, typeof(text) AS tt, message_ts AS ts, typeof(channel_id) AS ct, typeof(sender_id) AS st,
             json_extract(raw, '$.ROWID') AS rowid FROM messages
           WHERE source = 'device_messenger' AND json_extract(raw, '$.ROWID') IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(written.map((w) => w.rowid))) as StoredRow[];
  for (const m of stored) {
    counts.stored++;
    const w = written.find((x) => x.rowid === m.rowid) as Written;
    const what = `${where}: ROWID ${m.rowid} ${show(w.row)}`;
    if (m.tt !== "text" || m.ct !== "text" || m.st !== "text")
      fail(`${what}: stored text/channel/sender of types ${m.tt}/${m.ct}/${m.st}`);
    if (!Number.isFinite(m.ts) || m.ts < FIRST_DATE_MS || m.ts > LAST_DATE_MS)
      fail(`${what}: stored with message_ts ${m.ts}, which no timestamp can show`);
    const has = textsOf(
      c.db
        .query(
          "SELECT text AS t, typeof(text) AS tt, attributedBody AS b, typeof(attributedBody) AS bt FROM message WHERE ROWID = ?",
        )
        .get(m.rowid) as { t: unknown; tt: string; b: unknown; bt: string },
    );
    const allowed = [has.text, has.body].filter((x): x is string => x !== null).map(strip);
    const textWins = has.text !== null && strip(has.text).trim() !== "";
    const text = String(m.text);
    if (textWins ? text !== strip(has.text as string) : !allowed.includes(text) && text.trim() !== "")
      fail(`${what}: delivered ${show(text)}, the row has text ${show(has.text)} and body ${show(has.body)}`);
    const refs = store
      .query("SELECT platform_ref AS ref FROM attachments WHERE message_id = ?")
      .all(m.id) as {
      ref: string;
    }[];
    if (refs.length > 0) counts.withAttachments++;
    for (const { ref } of refs)
      if (!w.visibleGuids.has(ref)) fail(`${what}: re-hosted attachment ${ref}, not one of its visible rows`);
  }
}
