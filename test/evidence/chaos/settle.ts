/**
 * The warm-up before the first kill and the clean run after the last one. The warm-up starts gw serve
 * once and lets it place its chat.db cursor and learn the Discord channel (catch-up only covers
 * channels seen before), then stops it with SIGTERM. The settle run retries every key still without an
 * answer, waits (deadline-bounded) until every source message is stored and no delivery is pending,
 * and stops with SIGTERM, which must exit 0.
 */
import { Database } from "bun:sqlite";
import { waitFor } from "../../helpers/process.ts";
import { untilReady } from "./api.ts";
import { discordCaughtUp, identityOf, runChanges } from "./changes.ts";
import { eventIdentity } from "./checks.ts";
import { type Ledger, QUIET_MIX, runBurst, send } from "./load.ts";
import type { Rng } from "./rng.ts";
import { readEvents } from "./snapshot.ts";
import type { World } from "./world.ts";

function counts(w: World) {
  const db = new Database(w.env.GW_DB_PATH as string, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    const one = (sql: string) => (db.query(sql).get() as { n: number }).n;
    return {
      device: one(
        "SELECT COUNT(*) AS n FROM messages WHERE source = 'device_messenger' AND platform_id IS NOT NULL",
      ),
      discordInbound: one(
        "SELECT COUNT(*) AS n FROM messages WHERE source = 'community_chat' AND direction = 'inbound'",
      ),
      pending: one("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'"),
    };
  } finally {
    db.close();
  }
}

function sourceCounts(w: World) {
  const bot = w.fake.bot.id;
  const rows = w.chat.writer.db
    .query("SELECT COUNT(*) AS n FROM message WHERE associated_message_type = 0")
    .get() as { n: number };
  return {
    // Tapback rows are reactions, never messages.
    device: rows.n,
    discord: w.fake.history(w.discord.channelId).filter((m) => (m.author as { id: string }).id !== bot)
      .length,
  };
}

/** Until everything written so far is stored and delivered (or dead). */
export function untilSettled(w: World, timeoutMs: number): Promise<true> {
  return waitFor(
    () => {
      const want = sourceCounts(w);
      const have = counts(w);
      return have.device >= want.device && have.discordInbound >= want.discord && have.pending === 0
        ? true
        : undefined;
    },
    "every source message stored and no delivery pending",
    timeoutMs,
  );
}

async function stop(gw: ReturnType<World["start"]>): Promise<number> {
  gw.proc.kill("SIGTERM");
  return gw.exited;
}

export async function warmUp(w: World, rng: Rng, ledger: Ledger): Promise<void> {
  const gw = w.start();
  try {
    await untilReady(w);
    await runBurst(w, rng, ledger, { rows: 2, posts: 2, spanMs: 0, mix: { ...QUIET_MIX, stranger: 0 } });
    await untilSettled(w, 15_000);
  } catch (err) {
    await stop(gw);
    throw err;
  }
  const code = await stop(gw);
  if (code !== 0) throw new Error(`warm-up gw serve exited ${code}: ${gw.output().stderr.slice(-500)}`);
}

/** Whether every change still owed an event has one (read-only). */
function changesIn(w: World, ledger: Ledger): boolean {
  const db = new Database(w.env.GW_DB_PATH as string, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    const have = new Set(readEvents(db).map(eventIdentity));
    return ledger.changes.records.every((c) => c.promised === false || have.has(identityOf(c)));
  } finally {
    db.close();
  }
}

export async function settle(
  w: World,
  rng: Rng,
  ledger: Ledger,
  timeoutMs: number,
): Promise<{ exitCode: number; retried: number }> {
  await ledger.landed();
  const gw = w.start();
  let retried = 0;
  try {
    await untilReady(w);
    const open = ledger.unanswered();
    retried = open.length;
    for (const r of open) await send(w, r);
    // A last round of changes on both platforms with gw connected and caught up, nothing killing it.
    await untilSettled(w, timeoutMs);
    if (discordCaughtUp(w))
      await runChanges(w, rng, ledger.changes, { imessage: 6, discord: 6, spanMs: 200 }, true);
    await untilSettled(w, timeoutMs);
    // The events owed; a missing one is judged by the final checks, so the wait is bounded and quiet.
    await waitFor(() => (changesIn(w, ledger) ? true : undefined), "every owed event", 10_000).catch(
      () => false,
    );
  } catch (err) {
    await stop(gw);
    throw err;
  }
  const exitCode = await stop(gw);
  ledger.changes.resolve(null);
  return { exitCode, retried };
}
