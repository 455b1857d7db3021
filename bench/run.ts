/**
 * `bun run bench [name...]`: runs benchmarks one after another (all of them without names), passes
 * their output through, keeps each one's closing JSON report in bench/results/<name>.json, prints one
 * summary table, and rewrites the Performance section of docs/EVIDENCE.md from every stored report.
 * `bun run bench --list` names them; `--no-evidence` leaves the results and EVIDENCE.md untouched.
 * A benchmark that exits non-zero or prints no report counts as failed (exit 1 at the end).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { table, writeSection } from "./lib/evidence.ts";
import { type BenchReport, verdictLines } from "./lib/report.ts";

/** Name → what it answers, in the order of the summary; each runs bench/<name>/<name>.ts. */
export const BENCHES = {
  pickup: "chat.db commit → agent sees it, next to imessage-kit and a bare fs.watch",
  backlog: "catching up with 500,000 rows without blocking the API",
  api: "GET /messages/unread over HTTP next to a bare Bun.serve",
  load: "60 s of mixed load on one gw: latency, errors, RSS, WAL, drain, exactly-once",
  idle: "CPU and memory while nothing happens",
  startup: "compiled binary to first /healthz, and --version",
  webhooks: "stored → signed webhook received",
  discord: "Discord MESSAGE_CREATE → unread and webhook, and catch-up",
  receiver: "webhook arrival → agent start",
  approval:
    "phone approval: permission request → prompt posted, owner's answer → verdict, next to a direct send and a push",
  store: "the store's hot queries at 1,000,000 messages",
  channels: "GET /channels at 1,000,000 messages in 10,000 channels",
  search: "GET /messages/search at 1,000,000 messages, and the index's cost to ingest",
  events: "GET /events at 100,000 events, and gw serve idle on a 100,000-row chat.db",
  contacts: "10,000 Contacts cards: start-up, chat.db pick-up and event-loop stalls, next to GW_CONTACTS=0",
  soak: "gw serve RSS over 1,000,000 messages (Discord, chat.db, webhooks on)",
} as const satisfies Record<string, string>;
type Name = keyof typeof BENCHES;

const DIR = import.meta.dir;
/** A benchmark's entry, from bench/. */
const entryOf = (name: string) => `${name}/${name}.ts`;
const RESULTS = join(DIR, "results");

function lastReport(stdout: string): BenchReport | null {
  const lines = stdout.trimEnd().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim() ?? "";
    if (!line.startsWith("{")) continue;
    try {
      const r = JSON.parse(line) as BenchReport;
      return Array.isArray(r.summary) ? r : null;
    } catch {
      return null;
    }
  }
  return null;
}

async function runOne(name: Name): Promise<BenchReport | null> {
  const file = entryOf(name);
  process.stderr.write(`\n=== bench ${name} (bench/${file}) ===\n`);
  const proc = Bun.spawn([process.execPath, "run", join(DIR, file)], {
    stdout: "pipe",
    stderr: "inherit",
    env: process.env,
  });
  let out = "";
  const decoder = new TextDecoder();
  for await (const chunk of proc.stdout) {
    const text = decoder.decode(chunk, { stream: true });
    out += text;
    process.stdout.write(text);
  }
  const code = await proc.exited;
  const report = code === 0 ? lastReport(out) : null;
  if (!report) process.stderr.write(`bench ${name}: exit ${code}, no report\n`);
  return report;
}

/** The Performance section of docs/EVIDENCE.md, from the stored reports. Pure. */
export function performanceSection(reports: readonly BenchReport[]): string {
  const parts = [
    "## Performance",
    "",
    "Every figure is next to a raw baseline or a real peer measured in the same run on the same machine;",
    "compare the ratios, not the absolute times. Reproduce one with its command; `bun run bench` runs all.",
  ];
  for (const r of reports) {
    const m = r.machine;
    parts.push(
      "",
      `### ${r.bench}: \`${r.command}\``,
      "",
      `${m.platform}, ${m.cpus} × ${m.cpuModel}, ${m.memGiB} GiB; Bun ${m.bun}, SQLite ${m.sqlite}; revision ${m.revision}; ${r.wallS} s.`,
      "",
      table(
        ["figure", "gw", "baseline or peer, same run", "ratio", "target", "verdict"],
        r.summary.map((s) => [
          s.figure,
          s.value,
          s.baseline || "—",
          s.ratio === null ? "—" : `${s.ratio}×`,
          s.target || "—",
          s.pass === null ? "—" : s.pass ? "met" : "**missed**",
        ]),
      ),
    );
  }
  return parts.join("\n");
}

function storedReports(): BenchReport[] {
  return (Object.keys(BENCHES) as Name[])
    .map((n) => join(RESULTS, `${n}.json`))
    .filter((p) => existsSync(p))
    .map((p) => JSON.parse(readFileSync(p, "utf8")) as BenchReport);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  if (args.includes("--list")) {
    for (const [n, what] of Object.entries(BENCHES))
      process.stdout.write(`${n.padEnd(9)} bench/${entryOf(n)}: ${what}\n`);
    process.exit(0);
  }
  const evidence = !args.includes("--no-evidence");
  const names = args.filter((a) => !a.startsWith("--"));
  for (const n of names) {
    if (!(n in BENCHES)) {
      process.stderr.write(`bench: unknown benchmark "${n}" (bun run bench --list)\n`);
      process.exit(2);
    }
  }
  const chosen = (names.length > 0 ? names : Object.keys(BENCHES)) as Name[];
  const done: [Name, BenchReport | null][] = [];
  for (const n of chosen) {
    const r = await runOne(n);
    done.push([n, r]);
    if (r && evidence) {
      mkdirSync(RESULTS, { recursive: true });
      writeFileSync(join(RESULTS, `${n}.json`), `${JSON.stringify(r, null, 2)}\n`);
    }
  }
  if (evidence) writeSection("performance", performanceSection(storedReports()));
  const lines = ["", "=== summary ==="];
  for (const [n, r] of done) {
    lines.push(`${n}${r ? ` (${r.machine.revision}, ${r.wallS} s)` : ": FAILED, no report"}`);
    if (r) lines.push(...verdictLines(r.summary));
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  process.exit(done.every(([, r]) => r !== null) ? 0 : 1);
}
