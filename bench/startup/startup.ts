/**
 * Benchmark: start-up of the compiled binary, next to compiled hello-world binaries in the same run.
 *
 *   bun run bench startup        (or: bun run bench/startup/startup.ts)
 *
 * Builds, in a temp dir and with the flags of scripts/build.ts: gw itself, and two raw baselines, a
 * `Bun.serve` answering 200 and a program printing one line. Also builds gw without `--bytecode` (the
 * flags before this change), to show what bytecode buys. Then, BENCH_RUNS times each, alternating:
 * - serve: spawn `gw serve` on a fresh data dir (so creating the database and its migrations counts),
 *   and GET /healthz every millisecond until the first 200; the baseline is the hello-world server;
 * - version: spawn `gw --version` and wait for its exit; the baseline is the one-line program.
 * Targets (issue: performance): serve ≤ 100 ms, --version ≤ 50 ms; ([speed] item 4) the binary ≤ hello-world
 * + 10 MB. Environment: BENCH_RUNS (20), BENCH_KEEP (1 keeps the temp dir).
 */
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ASSET_FLAGS, FLAGS, writeAssets } from "../../scripts/build.ts";
import { distTable, report, type SummaryRow } from "../lib/report.ts";
import { buildBinary, timeServe as timeServeIn } from "../lib/serve-start.ts";
import { startSession } from "../lib/session.ts";
import { intEnv, KEEP, progressLine } from "../lib/settings.ts";
import { type Dist, dist } from "../lib/stats.ts";

const RUNS = intEnv("BENCH_RUNS", 20, 1);
/** [speed] item 4: the binary at most this many MB (10^6 bytes) over a hello-world built with the same flags. */
const TARGET = { serveMs: 100, versionMs: 50, sizeOverHelloMB: 10 };
const startedAt = performance.now();
const progress = progressLine("startup");

const session = startSession(progress, KEEP);
const dir = session.tempDir("gw-bench-startup-");

writeFileSync(
  join(dir, "hello-serve.ts"),
  'Bun.serve({ hostname: "127.0.0.1", port: Number(process.env.GW_BIND_PORT), fetch: () => new Response("ok") });\n',
);
writeFileSync(join(dir, "hello-print.ts"), 'process.stdout.write("hello 0.0.0\\n");\n');
progress("building gw (with and without --bytecode) and the hello-world baselines");
writeAssets();
const gw = buildBinary("src/main.ts", join(dir, "gw"), [...FLAGS, ...ASSET_FLAGS]);
const gwPlain = buildBinary("src/main.ts", join(dir, "gw-no-bytecode"), [
  ...FLAGS.filter((f) => f !== "--bytecode" && f !== "--format=esm"),
  ...ASSET_FLAGS,
]);
const helloServe = buildBinary(join(dir, "hello-serve.ts"), join(dir, "hello-serve"), FLAGS);
const helloPrint = buildBinary(join(dir, "hello-print.ts"), join(dir, "hello-print"), FLAGS);

const timeServe = (bin: string, args: string[]) => timeServeIn(bin, args, { root: dir });

async function timeExit(bin: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn([bin, ...args], { stdout: "pipe", stderr: "ignore" });
  await new Response(proc.stdout).text();
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${bin} ${args.join(" ")} exited ${code}`);
  return performance.now() - t0;
}

const KINDS = ["serve", "serveNoBytecode", "serveRaw", "version", "versionNoBytecode", "versionRaw"] as const;
type Kind = (typeof KINDS)[number];
const samples = Object.fromEntries(KINDS.map((k) => [k, [] as number[]])) as Record<Kind, number[]>;
try {
  // One untimed run each, so the binaries are in the page cache as they are after installation.
  await timeServe(gw, ["serve"]);
  await timeServe(gwPlain, ["serve"]);
  await timeServe(helloServe, []);
  progress(`${RUNS} runs of each, alternating`);
  for (let i = 0; i < RUNS; i++) {
    samples.serve.push(await timeServe(gw, ["serve"]));
    samples.serveNoBytecode.push(await timeServe(gwPlain, ["serve"]));
    samples.serveRaw.push(await timeServe(helloServe, []));
    samples.version.push(await timeExit(gw, ["--version"]));
    samples.versionNoBytecode.push(await timeExit(gwPlain, ["--version"]));
    samples.versionRaw.push(await timeExit(helloPrint, []));
  }
  const d = Object.fromEntries(KINDS.map((k) => [k, dist(samples[k])])) as Record<Kind, Dist>;
  const mib = (p: string) => Math.round((statSync(p).size / 2 ** 20) * 10) / 10;
  const sizes = { gw: mib(gw), gwNoBytecode: mib(gwPlain), helloServe: mib(helloServe) };
  const overHelloMB = Math.round((statSync(gw).size - statSync(helloServe).size) / 1e5) / 10;
  const summary: SummaryRow[] = [
    {
      figure: "`gw serve` → first /healthz 200, p50 (p90)",
      value: `${d.serve.p50} (${d.serve.p90}) ms`,
      baseline: `hello-world Bun.serve binary ${d.serveRaw.p50} (${d.serveRaw.p90}) ms; gw without --bytecode ${d.serveNoBytecode.p50} ms`,
      ratio: null,
      target: `≤ ${TARGET.serveMs} ms`,
      pass: d.serve.p50 <= TARGET.serveMs,
    },
    {
      figure: "`gw --version`, p50 (p90)",
      value: `${d.version.p50} (${d.version.p90}) ms`,
      baseline: `hello-world binary ${d.versionRaw.p50} (${d.versionRaw.p90}) ms; gw without --bytecode ${d.versionNoBytecode.p50} ms`,
      ratio: null,
      target: `≤ ${TARGET.versionMs} ms`,
      pass: d.version.p50 <= TARGET.versionMs,
    },
    {
      figure: "binary size over a hello-world binary",
      value: `+${overHelloMB} MB (${sizes.gw} MiB)`,
      baseline: `hello-world ${sizes.helloServe} MiB; gw without --bytecode ${sizes.gwNoBytecode} MiB`,
      ratio: null,
      target: `≤ +${TARGET.sizeOverHelloMB} MB`,
      pass: overHelloMB <= TARGET.sizeOverHelloMB,
    },
  ];
  report({
    bench: "startup",
    command: "bun run bench startup",
    startedAt,
    summary,
    results: { runs: RUNS, ...d, sizesMiB: sizes },
    lines: [
      `startup bench: ${RUNS} runs each`,
      ...distTable(
        "(ms)",
        ["p50", "p90", "max"],
        [
          ["gw serve → /healthz", d.serve],
          ["gw serve (no --bytecode)", d.serveNoBytecode],
          ["hello-world Bun.serve", d.serveRaw],
          ["gw --version", d.version],
          ["gw --version (no --bytecode)", d.versionNoBytecode],
          ["hello-world print", d.versionRaw],
        ],
      ),
    ],
  });
} finally {
  session.cleanup();
}
