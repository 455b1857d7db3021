/**
 * SIGTERM of gw serve under load: chat.db and Discord messages keep arriving while agents list unread
 * messages, mark them read and send with Idempotency-Keys; at a seeded instant gw gets SIGTERM. It
 * must exit 0, and nothing it acknowledged may be missing afterwards: every send answered 200 has its
 * outbound record, every mark_read answered 200 its read marks, every message an unread page listed
 * is stored, and every chat.db row committed before the signal that gw had read (at or below the
 * cursor it saved) is stored. After the restart that follows (the settle run), checkAcknowledged runs
 * again over all of it, every row committed before the signal included.
 */
import { Database } from "bun:sqlite";
import { call, untilReady } from "./api.ts";
import { type Ledger, QUIET_MIX, runBurst, send } from "./load.ts";
import type { Rng } from "./rng.ts";
import type { World } from "./world.ts";

export const STOP_DEADLINE_MS = 10_000;
const AGENT = { "x-agent-id": "chaos-load" };

export interface Acknowledged {
  sends: { key: string; id: string }[];
  marked: string[];
  listed: string[];
  /** The newest chat.db ROWID committed before the signal. */
  committed: number;
}

export interface SigtermResult {
  exitCode: number | null;
  stopMs: number;
  acknowledged: { sends: number; marks: number; listed: number };
  acked: Acknowledged;
  /** chat.db rows committed before the signal, and how many of them gw had read (at or below its cursor). */
  committed: number;
  readByGw: number;
  problems: string[];
}

export async function sigtermUnderLoad(w: World, rng: Rng, ledger: Ledger): Promise<SigtermResult> {
  const gw = w.start();
  await untilReady(w);
  let running = true;
  const sentOk: { key: string; id: string }[] = [];
  const markedOk = new Set<string>();
  const listed = new Set<string>();
  const agent = async () => {
    while (running) {
      const page = await call(w, "GET", "/messages/unread?limit=50", { headers: AGENT });
      if (page.status !== 200) break;
      const ids = (page.body as { messages: { id: string }[] }).messages.map((m) => m.id);
      for (const id of ids) listed.add(id);
      if (ids.length > 0) {
        const marked = await call(w, "POST", "/messages/mark_read", {
          headers: AGENT,
          body: { message_ids: ids },
        });
        if (marked.status === 200) for (const id of ids) markedOk.add(id);
      }
    }
  };
  const sender = async () => {
    while (running) {
      const r = ledger.fresh(w, rng.chance(0.7) ? "discord" : "imessage");
      const a = await send(w, r);
      if (a.status === 200) sentOk.push({ key: r.key, id: (a.body as { message_id: string }).message_id });
      if (a.status === 0) break;
    }
  };
  const writer = async () => {
    while (running) await runBurst(w, rng, ledger, { rows: 6, posts: 3, spanMs: 30, mix: QUIET_MIX });
  };
  const load = [agent(), agent(), sender(), writer()];
  await Bun.sleep(rng.int(200, 600));
  const committed = w.chat.writer.maxRowid();
  const t0 = performance.now();
  gw.proc.kill("SIGTERM");
  let deadline: ReturnType<typeof setTimeout> | undefined;
  const exitCode = await Promise.race([
    gw.exited,
    new Promise<null>((resolve) => {
      deadline = setTimeout(() => resolve(null), STOP_DEADLINE_MS);
    }),
  ]);
  clearTimeout(deadline);
  const stopMs = Math.round(performance.now() - t0);
  running = false;
  if (exitCode === null) {
    gw.proc.kill("SIGKILL");
    await gw.exited;
  }
  await Promise.all(load);

  const acked: Acknowledged = { sends: sentOk, marked: [...markedOk], listed: [...listed], committed };
  const problems = exitCode === 0 ? [] : [`exit ${exitCode ?? `none within ${STOP_DEADLINE_MS} ms`}`];
  const check = checkAcknowledged(w, acked, "cursor");
  return {
    exitCode,
    stopMs,
    acknowledged: { sends: sentOk.length, marks: markedOk.size, listed: listed.size },
    acked,
    committed,
    readByGw: check.rowsChecked,
    problems: [...problems, ...check.problems],
  };
}

/**
 * What gw acknowledged is in gw.db: the sends answered 200 (outbound records), the marks answered 200,
 * the messages listed, and the chat.db rows committed before the signal — those at or below gw's saved
 * cursor and not on its saved pending list (`"cursor"`: right after the stop), or all of them (`"all"`:
 * after a restart).
 */
export function checkAcknowledged(
  w: World,
  acked: Acknowledged,
  rows: "cursor" | "all",
): { problems: string[]; rowsChecked: number } {
  const problems: string[] = [];
  const db = new Database(w.env.GW_DB_PATH as string, { readonly: true });
  try {
    const has = db.query<{ direction: string }, [string]>("SELECT direction FROM messages WHERE id = ?1");
    for (const s of acked.sends)
      if (has.get(s.id)?.direction !== "outbound")
        problems.push(`send ${s.key} answered 200 as ${s.id}: no record`);
    const mark = db.query<{ n: number }, [string, string]>(
      "SELECT COUNT(*) AS n FROM read_marks WHERE message_id = ?1 AND agent_id = ?2",
    );
    for (const id of acked.marked)
      if ((mark.get(id, AGENT["x-agent-id"])?.n ?? 0) !== 1)
        problems.push(`mark_read of ${id} answered 200: no mark`);
    for (const id of acked.listed) if (!has.get(id)) problems.push(`listed message ${id} is not stored`);
    const saved = db
      .query("SELECT position, state FROM connector_cursors WHERE source = 'device_messenger'")
      .get() as { position: string; state: string | null };
    const cursor = Number(saved.position);
    // Rows waiting for their files sit on the pending list, saved with the cursor: not yet due.
    const pending = new Set(
      ((JSON.parse(saved.state ?? "{}").pending ?? []) as { rowid: number }[]).map((p) => p.rowid),
    );
    const guids = new Set(
      (
        db.query("SELECT platform_id AS g FROM messages WHERE source = 'device_messenger'").all() as {
          g: string;
        }[]
      ).map((r) => r.g),
    );
    const upTo = rows === "cursor" ? Math.min(cursor, acked.committed) : acked.committed;
    const committed = w.chat.writer.db
      // Tapback rows (changes.ts) are reactions, never messages.
      .query("SELECT ROWID AS rowid, guid FROM message WHERE ROWID <= ?1 AND associated_message_type = 0")
      .all(upTo) as { rowid: number; guid: string }[];
    for (const r of committed)
      if (!guids.has(r.guid) && !(rows === "cursor" && pending.has(r.rowid)))
        problems.push(`chat.db row ${r.rowid} committed before the SIGTERM is not stored`);
    return { problems, rowsChecked: committed.length };
  } finally {
    db.close();
  }
}
