/**
 * The community-queue run's instruments (community-queue.ts): a stream paced by timers (message i goes
 * out once the clock says the rate allows it, never ahead), a sampler of gw serve's RSS (/proc VmRSS,
 * Linux) and of community_chat's /healthz figures, and a read of what the state database holds of the
 * posted messages and their files. They observe; they never steer gw.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Gw } from "./harness.ts";

export type Phase = "warm-up" | "fault" | "tail" | "settle";

export interface Sample {
  /** ms since the stream started */
  at: number;
  phase: Phase;
  rssMb: number;
  /** community_chat's state and the figures of its detail, when /healthz answered. */
  state: string | null;
  held: number | null;
  dropped: number | null;
  detail: string | null;
}

export interface Posted {
  id: string;
  /** Its place in the stream (its text is `cq <i>`). */
  i: number;
  file: boolean;
}

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : Number.NaN;
}

/** Posts message `i` for every i < ratePerS × elapsed s, until `total`. */
export function stream(total: number, ratePerS: number, post: (i: number) => void) {
  const t0 = performance.now();
  let posted = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const timer = setInterval(() => {
    const due = Math.min(total, Math.floor(((performance.now() - t0) * ratePerS) / 1000));
    while (posted < due) post(posted++);
    if (posted >= total) {
      clearInterval(timer);
      done();
    }
  }, 10);
  return { t0, posted: () => posted, finished, stop: () => clearInterval(timer) };
}

const healthFigures = (body: Record<string, unknown> | null) => {
  const c = (body?.connectors as Record<string, { state: string; detail?: string }> | undefined)
    ?.community_chat;
  const detail = c?.detail ?? "";
  const held = /\((\d+) held/.exec(detail);
  const dropped = /(\d+) dropped past/.exec(detail);
  return {
    state: c?.state ?? null,
    held: held ? Number(held[1]) : null,
    dropped: dropped ? Number(dropped[1]) : null,
    detail: detail || null,
  };
};

/** RSS and community_chat's health every `everyMs` (one /healthz in flight at a time). */
export function sampler(gw: Gw, t0: number, everyMs: number, phase: () => Phase) {
  const samples: Sample[] = [];
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    const at = performance.now() - t0;
    const p = phase();
    const rss = rssMb(gw.pid);
    try {
      samples.push({ at, phase: p, rssMb: rss, ...healthFigures((await gw.health()).body) });
    } catch {
      samples.push({ at, phase: p, rssMb: rss, state: null, held: null, dropped: null, detail: null });
    } finally {
      busy = false;
    }
  }, everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

/** What the state database holds of the posted messages, and of their files (`fileBytes` each). */
export function storedOf(gw: Gw, posted: readonly Posted[], fileBytes: number) {
  const rows = gw.db(
    (db) =>
      db
        .query(
          "SELECT platform_id AS id, text FROM messages WHERE source = 'community_chat' AND direction = 'inbound' AND text LIKE 'cq %'",
        )
        .all() as { id: string; text: string }[],
  );
  const ids = new Set(rows.map((r) => r.id));
  const files = gw.db(
    (db) =>
      db
        .query(
          "SELECT m.platform_id AS id, a.file_name AS file, a.size_bytes AS size FROM attachments a JOIN messages m ON m.id = a.message_id WHERE m.source = 'community_chat' AND a.file_name IS NOT NULL",
        )
        .all() as { id: string; file: string; size: number }[],
  );
  const dir = gw.env.GW_ATTACHMENT_DIR as string;
  const whole = (f: { file: string; size: number }) =>
    f.size === fileBytes && existsSync(join(dir, f.file)) && statSync(join(dir, f.file)).size === f.size;
  const kept = new Set(files.filter(whole).map((f) => f.id));
  return {
    stored: posted.filter((p) => ids.has(p.id)).length,
    lost: posted.filter((p) => !ids.has(p.id)).length,
    // A message stored twice under any id repeats its text (every posted text is distinct).
    duplicates: rows.length - new Set(rows.map((r) => r.text)).size,
    files: {
      posted: posted.filter((p) => p.file).length,
      kept: posted.filter((p) => p.file && kept.has(p.id)).length,
      missing: posted.filter((p) => p.file && !kept.has(p.id)).map((p) => p.i),
    },
  };
}
