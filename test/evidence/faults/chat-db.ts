/**
 * chat.db faults against one real `gw serve` (reliability.md F7 and the chat.db rules of chatdb.md §8):
 * a writer holding BEGIN EXCLUSIVE for 10× gw's busy timeout (a WAL file, then a rollback-journal
 * one), a new file put at the path, a truncated file (a half copy, and the file cut to 0 bytes in
 * place), and something unreadable at the path. During each fault /healthz and /messages/unread are
 * sampled every 100 ms (status, latency, the connector's state and detail); after it ends a new message
 * is written and timed until stored. At the end every message written is stored exactly once and the
 * cursor sits on chat.db's last row.
 */
import { BUSY_TIMEOUT_MS } from "../../../src/connectors/device-messenger/chat-db.ts";
import { type ChatDbFile, chatDbFile, serveChatDb } from "./chatdb-files.ts";
import { type Gw, ms, storedCount, waitFor, workDir } from "./harness.ts";
import { type FaultRun, row } from "./types.ts";

export const POLL_MS = 100;
export const HOLD_MS = 10 * BUSY_TIMEOUT_MS;
/** A request during a fault must still be answered this fast (before the fix: 5-9.5 s). */
export const ANSWER_WITHIN_MS = 500;
/** After a fault ends, a new message must be stored within this (F7: ≤ 1 s). */
export const RESUME_WITHIN_MS = 1_000;

interface Sample {
  status: number;
  ms: number;
  state: string;
  detail: string;
  unreadStatus: number;
  unreadMs: number;
}

export interface PhaseResult {
  fault: string;
  samples: Sample[];
  /** Distinct connector states seen during the fault, in order. */
  states: string[];
  /** The detail of the first non-ok state, or the last detail. */
  detail: string;
  slowestMs: number;
  failedRequests: number;
  resumeMs: number;
}

export interface ChatDbDetails {
  phases: PhaseResult[];
  written: number;
  storedOnce: number;
  duplicates: number;
  cursorAtEnd: boolean;
  exitCode: number;
  root: boolean;
}

async function sample(gw: Gw, holdMs: number): Promise<Sample[]> {
  const out: Sample[] = [];
  const end = Date.now() + holdMs;
  while (Date.now() < end) {
    const [h, u] = await Promise.all([gw.health(), gw.get("/messages/unread?limit=1")]);
    const dm = (h.body?.connectors as Record<string, { state: string; detail: string }> | undefined)
      ?.device_messenger;
    out.push({
      status: h.status,
      ms: h.ms,
      state: dm?.state ?? "?",
      detail: dm?.detail ?? h.text.slice(0, 200),
      unreadStatus: u.status,
      unreadMs: u.ms,
    });
    await Bun.sleep(POLL_MS);
  }
  return out;
}

export async function chatDbFaults(): Promise<FaultRun<ChatDbDetails>> {
  const work = workDir("chatdb");
  const chat: ChatDbFile = chatDbFile(work.dir);
  const written: string[] = [];
  const root = process.getuid?.() === 0;
  let gw: Gw | null = null;
  try {
    gw = await serveChatDb(work.dir, chat, POLL_MS);
    const live = gw;
    const say = async (text: string): Promise<number> => {
      written.push(text);
      const t0 = performance.now();
      chat.say(text);
      await waitFor(() => (storedCount(live, text) > 0 ? true : undefined), `"${text}" stored`, 10_000).catch(
        (err: Error) => {
          const tail = live
            .logs()
            .slice(-8)
            .map((l) => `${l.msg} ${String(l.err ?? l.reason ?? "")}`);
          throw new Error(`${err.message}; gw's last log lines:\n${tail.join("\n")}`);
        },
      );
      return performance.now() - t0;
    };
    await say("baseline");

    const phases: PhaseResult[] = [];
    const phase = async (
      fault: string,
      start: () => (() => void) | Promise<() => void>,
      holdMs = HOLD_MS,
    ) => {
      const undo = await start();
      const samples = await sample(live, holdMs);
      undo();
      const resumeMs = await say(`after: ${fault}`);
      const states = samples.map((s) => s.state).filter((s, i, all) => i === 0 || all[i - 1] !== s);
      phases.push({
        fault,
        samples,
        states,
        detail: (samples.findLast((s) => s.state !== "ok") ?? samples.at(-1))?.detail ?? "",
        slowestMs: Math.max(...samples.map((s) => Math.max(s.ms, s.unreadMs))),
        failedRequests: samples.filter((s) => s.status !== 200 || s.unreadStatus !== 200).length,
        resumeMs,
      });
    };

    await phase(`locked by a writer, WAL (BEGIN EXCLUSIVE ${HOLD_MS} ms)`, () => chat.lock());
    await phase("replaced by a new file (a copy with one more row)", () => {
      written.push("in the replacement");
      chat.replaceWithCopy(["in the replacement"]);
      return () => {};
    });
    const reopened = () => live.logs().filter((l) => l.msg === "chat.db was replaced; reopening it").length;
    await phase(`locked by a writer, rollback journal (BEGIN EXCLUSIVE ${HOLD_MS} ms)`, async () => {
      const before = reopened();
      chat.replaceWithCopy([]);
      await waitFor(() => (reopened() > before ? true : undefined), "the rollback-journal copy opened");
      return chat.lock();
    });
    await phase("truncated: the path holds the first half of the file", () => chat.truncatedCopy());
    await phase("truncated in place to 0 bytes (same inode)", () => chat.truncatedInPlace(), 600);
    await phase("unreadable: a directory at the path", () => chat.unreadable("directory"));
    await phase("unreadable: a file that is not SQLite at the path", () => chat.unreadable("not sqlite"));
    if (!root) await phase("unreadable: chmod 000 (a new file)", () => chat.unreadable("chmod 000"));

    const last = chat.maxRowid();
    await waitFor(
      () =>
        live.db((db) => db.query("SELECT position FROM connector_cursors").get() as { position: string })
          ?.position === String(last)
          ? true
          : undefined,
      "the cursor on chat.db's last row",
    );
    const counts = written.map((t) => storedCount(live, t));
    const exitCode = await live.stop();
    const details: ChatDbDetails = {
      phases,
      written: written.length,
      storedOnce: counts.filter((n) => n === 1).length,
      duplicates: counts.filter((n) => n > 1).length,
      cursorAtEnd: true,
      exitCode,
      root,
    };
    return { rows: rowsOf(details), notes: notesOf(details), details };
  } finally {
    await gw?.stop();
    work.remove();
  }
}

function rowsOf(d: ChatDbDetails) {
  const rows = d.phases.map((p) => {
    const faultStates = p.states.filter((s) => s !== "ok");
    const blocking = p.fault.includes("rollback journal");
    const unreadable = p.fault.startsWith("unreadable") || p.fault.includes("first half");
    const checks: Record<string, boolean> = {
      "every request answered 200": p.failedRequests === 0,
      [`answered within ${ANSWER_WITHIN_MS} ms`]: p.slowestMs < ANSWER_WITHIN_MS,
      [`reading resumed within ${RESUME_WITHIN_MS} ms`]: p.resumeMs < RESUME_WITHIN_MS,
    };
    if (blocking || unreadable)
      checks["a non-ok state with a reason"] = faultStates.length > 0 && p.detail !== "";
    const state =
      faultStates.length > 0
        ? `/healthz device_messenger ${p.states.join(" → ")}: "${p.detail.replace(/\/\S*\/chat\.db/, "<chat.db>")}"`
        : "/healthz device_messenger stayed ok (nothing failed to read)";
    return row(
      `chat.db ${p.fault}`,
      p.samples.length,
      `${state}; ${p.samples.length} × (/healthz + /messages/unread) all 200, slowest ${ms(p.slowestMs)}; the next message stored ${ms(p.resumeMs)} after the fault ended`,
      checks,
    );
  });
  rows.push(
    row(
      "chat.db faults, all of the above in one gw serve: nothing lost",
      d.written,
      `${d.storedOnce} of ${d.written} messages stored exactly once, ${d.duplicates} twice; the cursor on chat.db's last row; gw serve never exited and stopped with ${d.exitCode}`,
      {
        "each stored once": d.storedOnce === d.written && d.duplicates === 0,
        "cursor at the end": d.cursorAtEnd,
        "clean exit": d.exitCode === 0,
      },
    ),
  );
  return rows;
}

function notesOf(d: ChatDbDetails): string[] {
  return [
    `chat.db: gw's busy timeout on chat.db is ${BUSY_TIMEOUT_MS} ms, so each lock is held ${HOLD_MS} ms (10×); poll interval ${POLL_MS} ms. A WAL reader is never blocked by a writer's BEGIN EXCLUSIVE (Messages' own mode), so the blocking case uses a rollback-journal copy.${d.root ? " The run was root, where chmod 000 does not deny reads: a directory and a non-SQLite file at the path stood in for an unreadable chat.db." : ""} Cut in place (same inode), the file may go unnoticed while SQLite serves the open connection's cached pages, or show as damaged at the next read; its bytes come back before anything new is written.`,
  ];
}
