/**
 * `bun run fuzz [--long] [item…]`: the "Bad input tried" runs of reliability.md 8.3 (test/evidence/fuzz/):
 * hostile requests to every route in process and over real HTTP, malformed HTTP on raw sockets, the
 * bearer corpus, the receiver's /webhook with signature and timestamp tampering, the rate limiter and
 * the idempotency store against models, hostile attachment paths and swaps after the check, malformed
 * chat.db rows and attributedBody blobs, malformed Discord gateway frames, Discord payloads quoting other
 * messages (raw keeps their ids only). Default scale 10 (ten times what `bun test` runs in
 * test/integration/fuzz-*.test.ts); --long: scale 100. FUZZ_SEED sets the seed.
 * Prints every item, rewrites the `bad-input` section of docs/EVIDENCE.md on a run of every item, and
 * exits 1 when anything did not hold.
 */
import fc from "fast-check";
import { evidenceSection, writeSection } from "../../bench/lib/evidence.ts";
import { machine } from "../../bench/lib/report.ts";
import { seedFrom } from "./chaos/rng.ts";
import { apiItems } from "./fuzz/api.ts";
import { chatDbItems } from "./fuzz/chatdb.ts";
import { discordRawItems } from "./fuzz/discord-raw.ts";
import { gatewayItems } from "./fuzz/gateway.ts";
import { httpItems } from "./fuzz/http.ts";
import { modelItems } from "./fuzz/models.ts";
import { pathItems } from "./fuzz/paths.ts";
import { receiverItems } from "./fuzz/receiver.ts";
import { searchItems } from "./fuzz/search.ts";
import type { FuzzItem, Outcome } from "./fuzz/types.ts";

export const ITEMS: FuzzItem[] = [
  ...apiItems,
  ...searchItems,
  ...httpItems,
  ...receiverItems,
  ...modelItems,
  ...pathItems,
  ...chatDbItems,
  ...gatewayItems,
  ...discordRawItems,
];

const args = process.argv.slice(2);
const long = args.includes("--long");
const asked = args.filter((a) => a !== "--long");
const unknown = asked.filter((a) => !ITEMS.some((i) => i.id === a));
if (unknown.length > 0) {
  console.error(`fuzz: unknown item(s) ${unknown.join(", ")}; known: ${ITEMS.map((i) => i.id).join(", ")}`);
  process.exit(2);
}
const items = asked.length > 0 ? ITEMS.filter((i) => asked.includes(i.id)) : ITEMS;
const scale = long ? 100 : 10;
const seed = seedFrom(process.env, "FUZZ_SEED");
const command = `FUZZ_SEED=${seed} bun run fuzz${long ? " --long" : ""}`;
console.log(`fuzz: scale ${scale}, seed ${seed}, ${items.length} items`);

const t0 = performance.now();
const rows = [];
for (const item of items) {
  const started = performance.now();
  let out: Outcome;
  try {
    out = await item.run({ scale, seed });
  } catch (err) {
    out = { cases: 0, failures: [`the run itself failed: ${(err as Error).stack ?? err}`] };
  }
  const s = ((performance.now() - started) / 1000).toFixed(1);
  const ok = out.failures.length === 0 && out.cases > 0;
  console.log(`  ${ok ? "held  " : "FAILED"}  ${item.id}: ${out.cases} cases (${s} s)`);
  for (const n of out.notes ?? []) console.log(`          ${n}`);
  for (const f of out.failures) console.log(`          ${f.replaceAll("\n", "\n          ")}`);
  rows.push({
    tried: item.tried,
    times: out.cases,
    held: [
      ok ? item.held : `**${out.failures.length} failure(s)**: ${out.failures[0]?.split("\n")[0]}`,
      ...(out.notes ?? []),
    ].join("; "),
    ok,
  });
}
const wallS = Math.round((performance.now() - t0) / 100) / 10;
const failed = rows.filter((r) => !r.ok);
const m = machine();
console.log("");
console.log(
  `fuzz: ${rows.length} items, ${rows.reduce((n, r) => n + r.times, 0)} cases, ${rows.length - failed.length} held, ${failed.length} did not; Bun ${m.bun}; ${wallS} s`,
);

if (asked.length === 0) {
  writeSection(
    "bad-input",
    evidenceSection({
      title: "Bad input tried",
      command,
      rows,
      notes: [
        `Scale ${scale}: each item tries ${scale} times the cases \`bun test\` tries (test/integration/fuzz-*.test.ts, scale 1, seed 20261124). fast-check ${fc.__version} generates and shrinks the properties; the corpora are fixed lists or seeded. A failure prints its seed and counterexample.`,
        "",
        "Found and fixed by these runs: an iMessage attachment path swapped for a symlink between its check and the copy was read through the swap (the checked file is now held open and copied from its descriptor); a request with an empty Host header got Bun's development error page, with source lines, as a 500 (both servers now run in production mode with a last-resort envelope, and read the path without new URL()); a body refused unread (401, 413, 404) kept its request pending, so SIGTERM waited until SIGKILL (such answers now close the connection). Regression tests: test/integration/fuzz-*.test.ts and test/e2e/body-limit.test.ts.",
        "",
        "Over the wire, Bun's HTTP parser refuses what it cannot parse before gw sees it: 400 (a control character in a header value, a malformed request), 431 (headers too large) and 505 (an HTTP version it does not speak, bare LFs, a NUL in the target), with no body. Those 505s are Bun's, not gw's; every answer gw itself gives is the envelope.",
      ],
      machine: m,
      wallS,
    }),
  );
  console.log("docs/EVIDENCE.md: bad-input section written");
}
process.exit(failed.length === 0 ? 0 : 1);
