/**
 * The kill loop: cycle after cycle, `gw serve` starts on the same files and is killed with SIGKILL at a
 * seeded instant inside one phase — during start-up (a backlog waiting on both platforms), during an
 * ingest burst (chat.db and Discord at once), during webhook delivery (the receiver refusing some),
 * or while sends with Idempotency-Keys are in flight (some caught between Discord's post and gw's
 * record). After every kill the afterKill invariants are checked on the database as the kill left it.
 * A cycle whose gw exited before the kill, or that never became ready, is a failure of that cycle.
 */
import { type GwProcess, waitFor } from "../../helpers/process.ts";
import { untilReady } from "./api.ts";
import { discordCaughtUp, GRACE_MS, runChanges } from "./changes.ts";
import { afterKill, type Verdict } from "./checks.ts";
import { FAILING_MIX, type Ledger, type Platform, QUIET_MIX, runBurst, send } from "./load.ts";
import { createRng, type Rng } from "./rng.ts";
import { snapshot } from "./snapshot.ts";
import type { World } from "./world.ts";

export const PHASES = ["start-up", "ingest", "delivery", "send"] as const;
export type Phase = (typeof PHASES)[number];

export interface CycleResult {
  cycle: number;
  phase: Phase;
  binary: boolean;
  /** Milliseconds between the phase's reference point and the kill. */
  killAfterMs: number;
  /** gw was still running when the signal came (else it had exited by itself: a failure). */
  killed: boolean;
  exitCode: number | null;
  /** A send phase that killed gw after Discord made a post and before gw recorded it. */
  caughtPost: boolean;
  failures: Verdict[];
  error: string | null;
}

async function kill(gw: GwProcess): Promise<{ killed: boolean; exitCode: number | null }> {
  const running = gw.proc.exitCode === null && gw.proc.signalCode === null;
  gw.proc.kill("SIGKILL");
  await gw.exited;
  return { killed: running, exitCode: gw.proc.exitCode };
}

/** Runs one phase against a started gw; resolves with the delay it chose and a promise of its leftovers. */
async function drive(
  w: World,
  rng: Rng,
  ledger: Ledger,
  phase: Phase,
): Promise<{ killAfterMs: number; leftovers: Promise<unknown>; caughtPost?: boolean }> {
  if (phase === "start-up") {
    const killAfterMs = rng.int(0, 700);
    await Bun.sleep(killAfterMs);
    return { killAfterMs, leftovers: Promise.resolve() };
  }
  await untilReady(w);
  if (phase === "ingest") {
    const plan = { rows: rng.int(8, 30), posts: rng.int(4, 16), spanMs: rng.int(40, 250), mix: QUIET_MIX };
    // Changes draw from their own stream, so the burst's schedule does not depend on their timing.
    const crng = createRng(rng.int(0, 2 ** 31));
    const changes = { imessage: rng.int(3, 10), discordBefore: rng.int(1, 4), discordDuring: rng.int(1, 5) };
    const killAfterMs = rng.int(0, plan.spanMs + 60);
    // Discord changes once gw is caught up, GRACE_MS before the burst (owed an event), then a burst of
    // edits, unsends and reactions on both platforms beside the burst of messages, cut by the kill.
    const live = await waitUntil(() => discordCaughtUp(w), 3_000);
    if (live) {
      await runChanges(
        w,
        crng,
        ledger.changes,
        { imessage: 0, discord: changes.discordBefore, spanMs: 0 },
        true,
      );
      await Bun.sleep(GRACE_MS);
    }
    const burst = Promise.all([
      runBurst(w, rng, ledger, plan),
      runChanges(
        w,
        crng,
        ledger.changes,
        { imessage: changes.imessage, discord: changes.discordDuring, spanMs: plan.spanMs },
        live,
      ),
    ]);
    await Bun.sleep(killAfterMs);
    return { killAfterMs, leftovers: burst };
  }
  if (phase === "delivery") {
    const before = w.sink.requests();
    await runBurst(w, rng, ledger, {
      rows: rng.int(4, 12),
      posts: rng.int(2, 8),
      spanMs: 20,
      mix: FAILING_MIX,
    });
    await waitUntil(() => w.sink.requests() > before, 3_000);
    const killAfterMs = rng.int(0, 150);
    await Bun.sleep(killAfterMs);
    return { killAfterMs, leftovers: Promise.resolve() };
  }
  // send: fresh keys on both platforms, plus the keys earlier kills left without an answer.
  const fresh = Array.from({ length: rng.int(1, 3) }, () =>
    ledger.fresh(w, rng.pick<Platform>(["imessage", "discord"])),
  );
  const batch = [
    ...ledger
      .unanswered()
      .filter((r) => !fresh.includes(r))
      .slice(0, 3),
    ...fresh,
  ];
  const catchPost = fresh.some((r) => r.platform === "discord") && rng.chance(0.5);
  if (catchPost)
    w.fake.fail({ method: "POST", path: /\/messages$/, status: 200, hang: "after-create", times: 1 });
  const posts = w.fake.posted.length;
  const inFlight = Promise.all(batch.map((r) => send(w, r)));
  const caughtPost = catchPost && (await waitUntil(() => w.fake.posted.length > posts, 5_000));
  const killAfterMs = catchPost ? 0 : rng.int(0, 250);
  await Bun.sleep(killAfterMs);
  return {
    killAfterMs,
    caughtPost,
    leftovers: inFlight.finally(() => w.fake.clearFailures()),
  };
}

/** Whether `probe` held within `timeoutMs` (checked every 5 ms). */
function waitUntil(probe: () => boolean, timeoutMs: number): Promise<boolean> {
  return waitFor(() => (probe() ? true : undefined), "the probe", timeoutMs, 5).then(
    () => true,
    () => false,
  );
}

export async function runCycle(
  w: World,
  rng: Rng,
  ledger: Ledger,
  cycle: number,
  phase: Phase,
  opts: { binary?: boolean } = {},
): Promise<CycleResult> {
  if (phase === "start-up") {
    // A backlog on both platforms for the start to read (and be killed reading), and iMessage changes
    // made while gw is down (chat.db is re-read; Discord changes while gw is down are not recovered).
    await runBurst(w, rng, ledger, {
      rows: rng.int(4, 20),
      posts: rng.int(2, 10),
      spanMs: 0,
      mix: QUIET_MIX,
    });
    await runChanges(w, rng, ledger.changes, { imessage: rng.int(2, 6), discord: 0, spanMs: 0 }, false);
  }
  const gw = w.start({ binary: opts.binary ?? false });
  let killAfterMs = 0;
  let leftovers: Promise<unknown> = Promise.resolve();
  let caughtPost = false;
  let error: string | null = null;
  try {
    const driven = await drive(w, rng, ledger, phase);
    ({ killAfterMs, leftovers } = driven);
    caughtPost = driven.caughtPost ?? false;
  } catch (err) {
    error = String(err);
  }
  const killAt = performance.now();
  const { killed, exitCode } = await kill(gw);
  await leftovers;
  ledger.changes.resolve(killAt);
  const failures = afterKill(snapshot(w, ledger, false)).filter((v) => !v.held);
  if (!killed)
    error ??= `gw serve exited by itself (code ${exitCode}) before the kill: ${gw.output().stderr.slice(-500)}`;
  return {
    cycle,
    phase,
    binary: opts.binary ?? false,
    killAfterMs,
    killed,
    exitCode,
    caughtPost,
    failures,
    error,
  };
}
