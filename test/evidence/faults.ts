/**
 * `bun run faults [family…]`: the "Faults survived" runs of reliability.md 8.2 (test/evidence/faults/):
 * webhook targets that fail, chat.db locked/replaced/truncated/unreadable, Discord socket drops and
 * 5xx/429 storms, the state database's disk full, SIGHUP storms under load, the store failing 30 s under a
 * 100 msg/s Discord stream (the queue bound, RSS). Each family runs real gw serve processes, as
 * test/e2e/faults-*.test.ts do in CI. Prints every row and a summary; a full run rewrites the `faults`
 * section of docs/EVIDENCE.md (naming families runs only those and writes nothing); exits 1 when anything
 * did not hold.
 */
import { evidenceSection, writeSection } from "../../bench/lib/evidence.ts";
import { machine } from "../../bench/lib/report.ts";
import { chatDbFaults } from "./faults/chat-db.ts";
import { communityQueueFaults } from "./faults/community-queue.ts";
import { discordFaults } from "./faults/discord.ts";
import { diskFullFaults } from "./faults/disk-full.ts";
import { diskFullEnospcFaults } from "./faults/disk-full-enospc.ts";
import { sighupFaults } from "./faults/sighup.ts";
import type { EvidenceRow, FaultRun } from "./faults/types.ts";
import { webhookFaults } from "./faults/webhooks.ts";

const FAMILIES: Record<string, () => Promise<FaultRun<unknown>>> = {
  webhooks: webhookFaults,
  "chat-db": chatDbFaults,
  discord: discordFaults,
  "disk-full": diskFullFaults,
  "disk-full-enospc": diskFullEnospcFaults,
  sighup: sighupFaults,
  "community-queue": () => communityQueueFaults(),
};

const asked = process.argv.slice(2);
const unknown = asked.filter((a) => !(a in FAMILIES));
if (unknown.length > 0) {
  console.error(
    `faults: unknown famil${unknown.length > 1 ? "ies" : "y"} ${unknown.join(", ")}; known: ${Object.keys(FAMILIES).join(", ")}`,
  );
  process.exit(2);
}
const names = asked.length > 0 ? asked : Object.keys(FAMILIES);

const t0 = performance.now();
const rows: EvidenceRow[] = [];
const notes: string[] = [];
for (const name of names) {
  const started = performance.now();
  console.log(`faults: ${name} …`);
  try {
    const run = await (FAMILIES[name] as () => Promise<FaultRun<unknown>>)();
    rows.push(...run.rows);
    notes.push(...run.notes);
    for (const r of run.rows)
      console.log(`  ${r.ok ? "held  " : "FAILED"}  ${r.tried}: ${r.times}× — ${r.held}`);
  } catch (err) {
    rows.push({
      tried: `${name} faults`,
      times: 0,
      held: `the run itself failed: ${(err as Error).message}`,
      ok: false,
    });
    console.log(`  FAILED  ${name}: ${(err as Error).stack ?? err}`);
  }
  console.log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
const wallS = Math.round((performance.now() - t0) / 100) / 10;
const failed = rows.filter((r) => !r.ok);
const m = machine();
console.log("");
console.log(
  `faults: ${rows.length} rows, ${rows.length - failed.length} held, ${failed.length} did not; ${names.length} families; Bun ${m.bun}, SQLite ${m.sqlite}; ${wallS} s`,
);

if (asked.length === 0) {
  writeSection(
    "faults",
    evidenceSection({
      title: "Faults survived",
      command: "bun run faults",
      rows,
      // One paragraph per note.
      notes: [
        "Every row runs real `gw serve` processes from source with an isolated environment, and drives the fault from outside as the world would: a TCP-level webhook receiver, other SQLite connections and file operations on chat.db, the fake Discord in the runner, the process's file-size limit, strace, signals. CI runs the same scenarios as test/e2e/faults-*.test.ts (the strace one only where strace is installed).",
        ...notes,
      ].flatMap((n, i) => (i === 0 ? [n] : ["", n])),
      machine: m,
      wallS,
    }),
  );
  console.log("docs/EVIDENCE.md: faults section written");
}
process.exit(failed.length === 0 ? 0 : 1);
