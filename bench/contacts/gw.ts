/**
 * Child process of bench/contacts/contacts.ts: gw built as `gw serve` builds it (lib/gw-child.ts serveLikeGw:
 * loadConfig over the GW_ variables of its environment, createService, prepare, listen, start), with an
 * event-loop probe: a timer re-armed with setTimeout(0) from just before the service is built, each turn
 * noting the gap since the previous one. Prints `{"ready":<port>}` once started; then, BENCH_STALL_WINDOW_MS
 * after the start began, `{"window":{…}}`: the first gap apart (it spans building the service, opening and
 * migrating the database, listening and the synchronous part of start(), the runner's first slice
 * included), the summary of every later gap, and with Contacts on (GW_CONTACTS_DIR) the runner's status
 * and when its first read ended (`ready()`), so the parent can tell that the window covered the whole
 * load. Then answers lib/child-protocol.ts until stopped.
 */
import { readFileSync } from "node:fs";
import type { Contacts } from "../../src/contacts/runner.ts";
import { emit, serveCommands } from "../lib/child-protocol.ts";
import { serveLikeGw, serveSetup } from "../lib/gw-child.ts";
import { dist, r2 } from "../lib/stats.ts";

const WINDOW_MS = Number(process.env.BENCH_STALL_WINDOW_MS ?? 1500);

/**
 * The main thread's CPU time and time waiting for a CPU while runnable, ns (Linux schedstat; zeros
 * elsewhere): a gap the thread spent running is the loop held; one spent waiting is the machine busy.
 * The kernel updates these at scheduler events and ticks (4 ms here), so one gap's split is approximate;
 * the window's totals are not.
 */
function sched(): [runNs: number, waitNs: number] {
  try {
    const [run, wait] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ");
    return [Number(run), Number(wait)];
  } catch {
    return [0, 0];
  }
}

const gaps: number[] = [];
/** Per gap: ms the main thread ran, ms it waited for a CPU. */
const split: [ran: number, waited: number][] = [];
let last = performance.now();
let lastSched = sched();
let ticking = true;
const tick = () => {
  const t = performance.now();
  const now = sched();
  gaps.push(t - last);
  split.push([(now[0] - lastSched[0]) / 1e6, (now[1] - lastSched[1]) / 1e6]);
  last = t;
  lastSched = now;
  if (ticking) setTimeout(tick, 0);
};

const setup = await serveSetup(process.env);
const t0 = performance.now();
last = t0;
lastSched = sched();
setTimeout(tick, 0);
const { svc } = await serveLikeGw(setup, { hostname: "127.0.0.1", port: 0 });
const contacts = (svc as { contacts?: Contacts | null }).contacts ?? null;
emit({ ready: svc.app.server?.port ?? 0, pid: process.pid, contacts: contacts !== null });
let readyMs: number | null = null;
void contacts?.ready().then(() => {
  readyMs = performance.now() - t0;
});
await Bun.sleep(Math.max(0, t0 + WINDOW_MS - performance.now()));
ticking = false;
const later = gaps.slice(1);
const largestAt = later.indexOf(Math.max(...later));
const total = (k: 0 | 1) => r2(split.slice(1).reduce((a, b) => a + b[k], 0));
emit({
  window: {
    ms: Math.round(performance.now() - t0),
    ticks: gaps.length,
    firstGapMs: Math.round((gaps[0] ?? Number.NaN) * 100) / 100,
    gaps: dist(later),
    /** When the largest later gap ended, ms after the start began, and how it was spent. */
    largestEndedAtMs: Math.round(gaps.slice(0, largestAt + 2).reduce((a, b) => a + b, 0)),
    largestRanMs: r2(split[largestAt + 1]?.[0] ?? Number.NaN),
    largestWaitedMs: r2(split[largestAt + 1]?.[1] ?? Number.NaN),
    /** After the first gap: the main thread's CPU time, and its time runnable but without a CPU. */
    ranMs: total(0),
    waitedMs: total(1),
    readyMs: readyMs === null ? null : Math.round(readyMs),
    rssMiB: Math.round((process.memoryUsage().rss / 2 ** 20) * 10) / 10,
    status: contacts?.status() ?? null,
  },
});

await serveCommands(async () => {
  await svc.app.stop();
  await svc.close();
});
