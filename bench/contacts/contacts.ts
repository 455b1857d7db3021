/**
 * Benchmark: what the Contacts reader costs gw (issue 32, item 5 "Budget"), each figure next to the same
 * gw without Contacts (GW_CONTACTS=0) in the same run.
 *
 *   bun run bench contacts        (or: bun run bench/contacts/contacts.ts)
 *
 * Writes a Contacts folder of BENCH_CONTACTS_CARDS cards in two accounts (world.ts, with
 * src/demo/addressbook-writer.ts), then:
 * (a) start-up (startup/startup.ts): the compiled binary as bench/startup/startup.ts builds and times it,
 *     spawn → first /healthz 200, BENCH_STARTUP_RUNS runs each, alternating; target: the p50 with the
 *     cards within 20 ms of the p50 without;
 * (b) pick-up (pickup/pickup.ts): a chat.db row → an agent's unread long poll answers, two gw processes
 *     as bench/pickup/pickup.ts runs them, rows alternating between them, BENCH_SAMPLES each; target: p50
 *     unchanged within noise (the 95 % bootstrap interval of the p50 difference holds 0);
 * (c) stalls (stall.ts): the largest gap between turns of a setTimeout(0) probe inside a
 *     gw-serve-like process while the cards load, and GET /healthz answered meanwhile, BENCH_STALL_RUNS
 *     runs each, alternating.
 * Environment: BENCH_CONTACTS_CARDS (10000), BENCH_CONTACTS_PARTS (startup,pickup,stall),
 * BENCH_STARTUP_RUNS (20), BENCH_STALL_RUNS (10), BENCH_STALL_WINDOW_MS (1500), BENCH_SAMPLES (200),
 * BENCH_WARMUP (10), BENCH_GAP_MIN_MS (50), BENCH_GAP_MAX_MS (400), BENCH_SEED (1), BENCH_KEEP (0).
 */
import { join } from "node:path";
import { ASSET_FLAGS, FLAGS, writeAssets } from "../../scripts/build.ts";
import { plainRow, ratio, report, type SummaryRow } from "../lib/report.ts";
import { buildBinary } from "../lib/serve-start.ts";
import { startSession } from "../lib/session.ts";
import { intEnv, KEEP, progressLine } from "../lib/settings.ts";
import { dist, median, mulberry32, percentile, r2 } from "../lib/stats.ts";
import { type PickupResult, pickupAB } from "./pickup.ts";
import { type StallResult, stallAB } from "./stall.ts";
import { type StartupResult, startupAB } from "./startup.ts";
import { writeContactsFolder } from "./world.ts";

const CARDS = intEnv("BENCH_CONTACTS_CARDS", 10_000, 1);
const STARTUP_RUNS = intEnv("BENCH_STARTUP_RUNS", 20, 1);
const STALL_RUNS = intEnv("BENCH_STALL_RUNS", 10, 1);
const STALL_WINDOW_MS = intEnv("BENCH_STALL_WINDOW_MS", 1500, 100);
const PARTS = new Set((process.env.BENCH_CONTACTS_PARTS || "startup,pickup,stall").split(","));
/** Issue 32 item 5: start-up with the cards within this of start-up without Contacts. */
const STARTUP_BUDGET_MS = 20;
const startedAt = performance.now();
const progress = progressLine("contacts");
const session = startSession(progress, KEEP);

/** The 95 % bootstrap interval of median(a) − median(b) (2,000 resamples, seeded). */
function medianDiffInterval(a: readonly number[], b: readonly number[], seed = 1): [number, number] {
  const random = mulberry32(seed);
  const pick = (xs: readonly number[]) =>
    Array.from(xs, () => xs[Math.floor(random() * xs.length)] as number);
  const diffs = Array.from({ length: 2000 }, () => median(pick(a)) - median(pick(b))).sort((x, y) => x - y);
  return [percentile(diffs, 2.5), percentile(diffs, 97.5)];
}

function startupRows(s: StartupResult): SummaryRow[] {
  return [
    {
      figure: `\`gw serve\` → first /healthz 200 with ${CARDS.toLocaleString("en")} cards, p50 (p90)`,
      value: `${s.withContacts.p50} (${s.withContacts.p90}) ms; Δp50 ${s.p50DeltaMs} ms, Δp90 ${s.p90DeltaMs} ms`,
      baseline: `GW_CONTACTS=0 ${s.without.p50} (${s.without.p90}) ms`,
      ratio: ratio(s.withContacts.p50, s.without.p50),
      target: `p50 within ${STARTUP_BUDGET_MS} ms of the baseline's`,
      pass: s.p50DeltaMs <= STARTUP_BUDGET_MS,
    },
    plainRow(
      "Contacts runner in those runs (its log): first check's start → book swapped in, p50 (max); its slices, p50; longest slice, p50 (max)",
      `${s.contactsReadMs.p50} (${s.contactsReadMs.max}) ms; ${s.slices.p50} slices; ${s.longestSliceMs.p50} (${s.longestSliceMs.max}) ms`,
    ),
  ];
}

function pickupRows(p: PickupResult): SummaryRow[] {
  const a = p.withContacts.figures["gw.longpoll"];
  const b = p.without.figures["gw.longpoll"];
  const ia = p.withContacts.figures["gw.ingest"];
  const ib = p.without.figures["gw.ingest"];
  if (!a || !b || !ia || !ib) throw new Error("pick-up: a figure is missing");
  const [lo, hi] = medianDiffInterval(p.withContacts.longpoll, p.without.longpoll);
  return [
    {
      figure: "chat.db row → unread long poll answered, p50 (p99)",
      value: `${a.latency.p50} (${a.latency.p99}) ms, ${a.seen}/${a.n} seen; Δp50 ${r2(a.latency.p50 - b.latency.p50)} ms, 95 % interval [${r2(lo)}, ${r2(hi)}]`,
      baseline: `GW_CONTACTS=0 ${b.latency.p50} (${b.latency.p99}) ms, ${b.seen}/${b.n} seen`,
      ratio: ratio(a.latency.p50, b.latency.p50),
      target: "p50 unchanged within noise (the interval holds 0)",
      pass: lo <= 0 && hi >= 0 && a.stuck === 0,
    },
    {
      figure: "chat.db row → ingest committed in gw, p50 (p99)",
      value: `${ia.latency.p50} (${ia.latency.p99}) ms`,
      baseline: `GW_CONTACTS=0 ${ib.latency.p50} (${ib.latency.p99}) ms`,
      ratio: ratio(ia.latency.p50, ib.latency.p50),
      target: "",
      pass: null,
    },
  ];
}

/** The run with the largest gap, and how that gap was spent (approximate: schedstat). */
function worst(side: StallResult["withContacts"]): string {
  const w = side.windows.reduce((a, b) => (b.gaps.max > a.gaps.max ? b : a));
  return `worst ~${w.largestRanMs} ms running, ~${w.largestWaitedMs} ms without a CPU`;
}

function stallRows(s: StallResult): SummaryRow[] {
  const a = s.withContacts;
  const b = s.without;
  const waited = (x: StallResult["withContacts"]) => dist(x.windows.map((w) => w.waitedMs)).p50;
  return [
    {
      figure: `largest event-loop gap while ${CARDS.toLocaleString("en")} cards load (after the service's first turn), max of ${s.runs} runs (runs' p50); runs' gap p99 max`,
      value: `${a.largestGapMs.max} (${a.largestGapMs.p50}) ms, ${worst(a)}; p99 ${a.gapP99Ms.max} ms`,
      baseline: `GW_CONTACTS=0, same window: ${b.largestGapMs.max} (${b.largestGapMs.p50}) ms, ${worst(b)}; p99 ${b.gapP99Ms.max} ms`,
      ratio: null,
      target: "",
      pass: null,
    },
    {
      figure: "main thread runnable without a CPU during the window (the machine's other work), p50 of runs",
      value: `${waited(a)} ms`,
      baseline: `GW_CONTACTS=0 ${waited(b)} ms`,
      ratio: null,
      target: "",
      pass: null,
    },
    {
      figure:
        "building and starting the service, up to the probe's first turn (one synchronous stretch), p50 (max)",
      value: `${a.firstGapMs.p50} (${a.firstGapMs.max}) ms`,
      baseline: `GW_CONTACTS=0 ${b.firstGapMs.p50} (${b.firstGapMs.max}) ms`,
      ratio: null,
      target: "",
      pass: null,
    },
    {
      figure: "GET /healthz while the cards load, p50 / p99 / max",
      value: `${a.healthzMs.p50} / ${a.healthzMs.p99} / ${a.healthzMs.max} ms (${a.healthzMs.n})`,
      baseline: `GW_CONTACTS=0 ${b.healthzMs.p50} / ${b.healthzMs.p99} / ${b.healthzMs.max} ms (${b.healthzMs.n})`,
      ratio: null,
      target: "",
      pass: null,
    },
    {
      figure: "RSS once the cards are read (the window's end), p50",
      value: `${a.rssMiB.p50} MiB`,
      baseline: `GW_CONTACTS=0 ${b.rssMiB.p50} MiB`,
      ratio: null,
      target: "",
      pass: null,
    },
    plainRow(
      "Contacts ready (first read ended) after the service start began, p50 (max)",
      `${a.readyMs?.p50} (${a.readyMs?.max}) ms`,
    ),
  ];
}

try {
  const root = session.tempDir("gw-bench-contacts-");
  progress(`writing ${CARDS} cards in two accounts`);
  const contactsDir = writeContactsFolder(root, CARDS);
  const results: Record<string, unknown> = { cards: CARDS };
  const summary: SummaryRow[] = [];
  if (PARTS.has("startup")) {
    progress("building gw as scripts/build.ts does");
    writeAssets();
    const gw = buildBinary("src/main.ts", join(root, "gw"), [...FLAGS, ...ASSET_FLAGS]);
    const s = await startupAB({ gw, root, contactsDir, cards: CARDS, runs: STARTUP_RUNS, progress });
    results.startup = s;
    summary.push(...startupRows(s));
  }
  if (PARTS.has("pickup")) {
    const p = await pickupAB({ session, contactsDir, cards: CARDS, progress });
    results.pickup = {
      ...p,
      withContacts: { figures: p.withContacts.figures },
      without: { figures: p.without.figures },
    };
    summary.push(...pickupRows(p));
  }
  if (PARTS.has("stall")) {
    const s = await stallAB({
      session,
      contactsDir,
      cards: CARDS,
      runs: STALL_RUNS,
      windowMs: STALL_WINDOW_MS,
      progress,
    });
    results.stall = s;
    summary.push(...stallRows(s));
  }
  report({
    bench: "contacts",
    command: "bun run bench contacts",
    startedAt,
    summary,
    results,
    lines: [`contacts bench: ${CARDS} cards; parts ${[...PARTS].join(", ")}`],
  });
} finally {
  session.cleanup();
}
