/**
 * The queries bench/search/search.ts times: cases by word frequency (rare: rank ≥ 5,000, found in ~40–250
 * messages; mid: ranks 300–3,000, ~400–4,000; common: the top 30, ~40,000–660,000; a message's words),
 * each over all channels and within the message's own channel, words taken from sampled stored messages
 * so every query has matches. Timed over HTTP against gw (sequential, keep-alive, the cases interleaved)
 * and in process with store.search.search, the same queries.
 */
import type { Store } from "../../src/store/store.ts";
import { TOKEN } from "../lib/settings.ts";
import type { Sample } from "./seed.ts";
import { LIMIT, QUERIES, randInt, rng, WARMUP } from "./settings.ts";
import { wordOf } from "./world.ts";

export interface Spec {
  q: string;
  channelId: string | null;
}

export interface CaseResult {
  name: string;
  specs: Spec[];
  httpMs: number[];
  storeMs: number[];
  rows: number[];
}

const rare = (r: number) => r >= 5000;
const mid = (r: number) => r >= 300 && r < 3000;
const common = (r: number) => r < 30;

function one(ranks: number[], pred: (r: number) => boolean, n = 1): number[] | null {
  const found = [...new Set(ranks.filter(pred))];
  if (found.length < n) return null;
  return found.sort(() => rng() - 0.5).slice(0, n);
}

function commonest(ranks: number[], n: number): number[] | null {
  const found = [...new Set(ranks)].sort((a, b) => a - b).slice(0, n);
  return found.length === n ? found : null;
}

const both = (a: number[] | null, b: number[] | null) => (a && b ? [...a, ...b] : null);

/** Each case's words, from one sampled message (null: this message cannot make that query). */
const WORD_CASES: [string, (ranks: number[]) => number[] | null][] = [
  ["1 rare word", (r) => one(r, rare)],
  ["1 mid word", (r) => one(r, mid)],
  ["1 common word", (r) => one(r, common)],
  ["rare + common", (r) => both(one(r, rare), one(r, common))],
  ["2 mid words", (r) => one(r, mid, 2)],
  ["2 common words", (r) => one(r, common, 2)],
  ["3 words of a message", (r) => one(r, () => true, 3)],
  ["its 5 commonest words", (r) => commonest(r, 5)],
];

export function buildCases(samples: readonly Sample[]): CaseResult[] {
  return WORD_CASES.flatMap(([name, words]) =>
    [false, true].map((inChannel) => {
      const specs: Spec[] = [];
      for (let tries = 0; specs.length < QUERIES && tries < QUERIES * 50; tries++) {
        const s = samples[randInt(samples.length)] as Sample;
        const w = words(s.ranks);
        if (w && w.length > 0)
          specs.push({ q: w.map(wordOf).join(" "), channelId: inChannel ? s.channelId : null });
      }
      return { name: `${name}${inChannel ? ", its channel" : ""}`, specs, httpMs: [], storeMs: [], rows: [] };
    }),
  );
}

const pathOf = (s: Spec) =>
  `/messages/search?q=${encodeURIComponent(s.q)}&limit=${LIMIT}` +
  (s.channelId === null ? "" : `&channel_id=${encodeURIComponent(s.channelId)}`);

async function get(port: number, s: Spec): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${pathOf(s)}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "bench" },
  });
  const body = (await res.json()) as { messages?: unknown[] };
  if (res.status !== 200 || !body.messages)
    throw new Error(`${pathOf(s)}: ${res.status} ${JSON.stringify(body)}`);
  return body.messages.length;
}

/** Times every case's queries over HTTP, interleaving the cases so machine noise spreads evenly. */
export async function timeHttp(port: number, cases: CaseResult[]): Promise<void> {
  for (let i = 0; i < WARMUP; i++) {
    const c = cases[i % cases.length] as CaseResult;
    await get(port, c.specs[randInt(c.specs.length)] as Spec);
  }
  const most = Math.max(...cases.map((c) => c.specs.length));
  for (let i = 0; i < most; i++)
    for (const c of cases) {
      const s = c.specs[i];
      if (!s) continue;
      const t0 = performance.now();
      c.rows.push(await get(port, s));
      c.httpMs.push(performance.now() - t0);
    }
}

/** The same queries through store.search.search in this process (no HTTP, no envelopes). */
export function timeStore(store: Store, cases: CaseResult[]): void {
  for (const c of cases)
    for (const s of c.specs) {
      const t0 = performance.now();
      store.search.search({ q: s.q, source: null, channelId: s.channelId, limit: LIMIT });
      c.storeMs.push(performance.now() - t0);
    }
}
