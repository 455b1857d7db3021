/**
 * bench/contacts/contacts.ts, part (c): how long the event loop is held while the address book loads. Each run
 * starts bench/contacts/gw.ts (gw built as `gw serve` builds it, a setTimeout(0) probe noting every gap
 * between its turns over BENCH_STALL_WINDOW_MS from the start; the first gap, building the service, apart)
 * on a fresh home, with the Contacts folder
 * (GW_CONTACTS_DIR) or without (GW_CONTACTS=0), alternating A B B A. Meanwhile this process asks
 * GET /healthz every millisecond after the previous answer, each answer timed, as an operator's probe or
 * an agent's request would meet the load. A run with Contacts counts only when the runner read every card
 * within the window. On a machine shared with other work a gap can be time without a CPU: the child
 * reports how the largest gap and the whole window split between running and waiting (schedstat).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chatDbPathIn, GW_ALLOWLIST, gwEnvFor, openBenchChatDb } from "../lib/chatdb.ts";
import { Child } from "../lib/child.ts";
import type { Session } from "../lib/session.ts";
import { type Dist, dist } from "../lib/stats.ts";
import type { Book } from "./world.ts";

interface Window {
  ms: number;
  ticks: number;
  firstGapMs: number;
  gaps: Dist;
  largestEndedAtMs: number;
  largestRanMs: number;
  largestWaitedMs: number;
  ranMs: number;
  waitedMs: number;
  readyMs: number | null;
  /** At the window's end. */
  rssMiB: number;
  status: { files: number; cards: number; problem: string | null } | null;
}

export interface StallSide {
  /** Each run's first gap: building and starting the service, up to the probe's first turn, ms. */
  firstGapMs: Dist;
  /** Each run's largest later gap between two turns of the probe, ms. */
  largestGapMs: Dist;
  /** Every run's gap p99, ms. */
  gapP99Ms: Dist;
  /** /healthz round trips during the window, all runs together. */
  healthzMs: Dist;
  /** RSS at the window's end, MiB. */
  rssMiB: Dist;
  /** With Contacts: the runner's first read ended, ms after the start began. */
  readyMs: Dist | null;
  windows: Window[];
}

export interface StallResult {
  runs: number;
  windowMs: number;
  withContacts: StallSide;
  without: StallSide;
}

async function oneRun(
  session: Session,
  env: Record<string, string>,
  windowMs: number,
): Promise<{ w: Window; healthz: number[] }> {
  const dir = session.tempDir("gw-bench-contacts-stall-");
  writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);
  const chatDbPath = chatDbPathIn(dir);
  openBenchChatDb(chatDbPath).close();
  const child = new Child("gw(stall)", [join(import.meta.dir, "gw.ts")], {
    ...gwEnvFor(dir, chatDbPath),
    GW_DEFAULT_REGION: "US",
    BENCH_STALL_WINDOW_MS: String(windowMs),
    ...env,
  });
  try {
    const ready = await child.waitFor((m) => "ready" in m, 60_000, "ready");
    if (env.GW_CONTACTS_DIR && ready.contacts !== true)
      throw new Error("gw serve built no Contacts runner (createService): nothing to measure");
    const healthz: number[] = [];
    const url = `http://127.0.0.1:${ready.ready as number}/healthz`;
    const done = () => child.msgs.some((m) => "window" in m);
    while (!done()) {
      const t = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      healthz.push(performance.now() - t);
      await Bun.sleep(1);
    }
    const w = (await child.waitFor((m) => "window" in m, 5000, "window")).window as Window;
    return { w, healthz };
  } finally {
    await child.stop();
  }
}

function summarise(runs: { w: Window; healthz: number[] }[], contacts: boolean): StallSide {
  return {
    firstGapMs: dist(runs.map((r) => r.w.firstGapMs)),
    largestGapMs: dist(runs.map((r) => r.w.gaps.max)),
    gapP99Ms: dist(runs.map((r) => r.w.gaps.p99)),
    healthzMs: dist(runs.flatMap((r) => r.healthz)),
    rssMiB: dist(runs.map((r) => r.w.rssMiB)),
    readyMs: contacts ? dist(runs.map((r) => r.w.readyMs ?? Number.NaN)) : null,
    windows: runs.map((r) => r.w),
  };
}

export async function stallAB(
  o: Book & { session: Session; runs: number; windowMs: number },
): Promise<StallResult> {
  const a: { w: Window; healthz: number[] }[] = [];
  const b: { w: Window; healthz: number[] }[] = [];
  const withContacts = async () => {
    const r = await oneRun(o.session, { GW_CONTACTS_DIR: o.contactsDir }, o.windowMs);
    if (r.w.readyMs === null || r.w.status?.cards !== o.cards)
      throw new Error(
        `Contacts not read within the ${o.windowMs} ms window (${JSON.stringify(r.w.status)}): raise BENCH_STALL_WINDOW_MS`,
      );
    a.push(r);
  };
  const without = async () => {
    b.push(await oneRun(o.session, { GW_CONTACTS: "0" }, o.windowMs));
  };
  o.progress(`stall: ${o.runs} runs each, alternating, ${o.windowMs} ms windows`);
  for (let i = 0; i < o.runs; i++) {
    if (i % 2 === 0) {
      await withContacts();
      await without();
    } else {
      await without();
      await withContacts();
    }
  }
  return {
    runs: o.runs,
    windowMs: o.windowMs,
    withContacts: summarise(a, true),
    without: summarise(b, false),
  };
}
