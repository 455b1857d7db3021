/**
 * `bun run chaos [--long]`: kill -9 of gw serve at seeded instants (start-up, ingest bursts, webhook
 * delivery, sends in flight), SIGTERM under load and kill -9 of gw receiver after its 204s, then the
 * invariants of reliability.md 8.4 (test/evidence/chaos/). Short mode: 30 cycles, as CI runs it in
 * test/e2e/chaos.test.ts; --long: 200 cycles, the compiled binary built for one of them. CHAOS_SEED
 * sets the seed. Prints progress and the summary line, rewrites the `crashes` section of
 * docs/EVIDENCE.md, and exits 1 when anything did not hold.
 */
import { evidenceSection, writeSection } from "../../bench/lib/evidence.ts";
import { machine } from "../../bench/lib/report.ts";
import { seedFrom } from "./chaos/rng.ts";
import { runChaos } from "./chaos/run.ts";

export const SHORT = { cycles: 30, receiverRounds: 2, sigtermRounds: 1, settleTimeoutMs: 30_000 };
export const LONG = { cycles: 200, receiverRounds: 50, sigtermRounds: 5, settleTimeoutMs: 120_000 };

const long = process.argv.includes("--long");
const seed = seedFrom(process.env);
const mode = long ? LONG : SHORT;
const t0 = performance.now();
console.log(`chaos: ${long ? "long" : "short"} mode, ${mode.cycles} cycles, seed ${seed}`);
const report = await runChaos({
  ...mode,
  seed,
  binary: long ? "build" : "fresh",
  log: (line) => console.log(`  ${line}`),
});
const wallS = Math.round((performance.now() - t0) / 100) / 10;
const m = machine();
const command = `CHAOS_SEED=${seed} bun run chaos${long ? " --long" : ""}`;

console.log("");
for (const r of report.rows)
  console.log(`  ${r.ok ? "held  " : "FAILED"}  ${r.tried}: ${r.times}× — ${r.held}`);
for (const v of report.finalVerdicts.filter((x) => !x.held)) console.log(`  FAILED  ${v.name}: ${v.detail}`);
console.log("");
console.log(`${report.summary}; Bun ${m.bun}, SQLite ${m.sqlite}; ${wallS} s`);

writeSection(
  "crashes",
  evidenceSection({
    title: "Crashes survived",
    command,
    rows: report.rows,
    notes: [
      `Summary: ${report.summary}.`,
      "",
      "Each kill is a SIGKILL of `gw serve` (from source; one cycle runs the compiled `dist/gw` when it is built) at a seeded delay inside its phase; the invariants after every kill are read from gw.db as the kill left it, and a clean run lets everything settle before the final checks. The sources themselves (chat.db, the fake Discord's history) are the record of what came in; the webhook receiver lives in the runner, checks every signature and dedupes by delivery id. Timers: webhook retries 20/40/60/80 ms, chat.db poll 50 ms. The seed fixes the schedule (phases, delays, bursts, markers), not the machine's timing.",
      "",
      "Platform changes ride along (test/evidence/chaos/changes.ts): on messages gw has stored, the world edits and unsends chat.db rows in place as Messages does and writes tapback rows (add 2000–2007, remove 3000–3007) — before start-ups while gw is down and during ingest bursts — and, while gw is connected and caught up, sends MESSAGE_UPDATE, MESSAGE_DELETE and reactions through the fake Discord. Every iMessage change is owed exactly one event (chat.db is re-read); a Discord change is owed one when it was dispatched at least the grace time before the next kill (Discord replays nothing to a new session, so a change a kill catches before its commit is lost like one made while gw is down, as the README says). Each change has an identity no other shares; the events in gw.db (read-only) are matched to them: none twice, none without its change, and every changed message carries its latest edit or is a tombstone.",
      "",
      "The receiver kills have a world of their own: `gw serve` on a chat.db pushes a friend's messages from two chats to a real `gw receiver` running the fake agent. Every round starts a new receiver (a new lifetime) on the same journal (GW_RECEIVER_DB_PATH), kills it once its 204s are in, and a last receiver, stopped with SIGTERM, lets everything end; the agent's own record (which receiver started each run, its preamble, whether it ended) is judged by test/evidence/chaos/receiver-checks.ts.",
      "",
      "Found and fixed by this run: kill -9 of `gw receiver` left the agent's process group running (src/core/spawn.ts now guards every run's group against the parent's death); a kill between copying an iMessage attachment and its chmod left a 0644 copy (src/connectors/device-messenger/attachments.ts now creates the copy 0600). A kill between re-hosting a file and storing its message left that file (0600, never served) in the attachment directory with no record: gw serve now deletes such files at start-up (src/attachments/sweeper.ts), and the settle run must leave none.",
    ],
    machine: m,
    wallS,
  }),
);
console.log("docs/EVIDENCE.md: crashes section written");
process.exit(report.ok ? 0 : 1);
