/**
 * bench/discord/discord.ts's processes: the fake Discord (hosted here, Discord's own heartbeat interval), gw as
 * bench/discord/gw.ts in its own process with an explicit environment (the allowlisted user Ann), and
 * gw's DDL for the raw baselines' tables. A DiscordRun holds the work dir and the fakes still running,
 * for the cleanup.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  FAKE_BOT_TOKEN,
  type FakeDiscord,
  type FakeUser,
  startFakeDiscord,
} from "../../src/demo/fake-discord/server.ts";
import { startChild } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import { gwEnv } from "../lib/gw-env.ts";
import { CATCHUP_BOUND, HERE } from "./settings.ts";

export interface DiscordRun {
  root: string;
  fakes: Set<FakeDiscord>;
}

export async function startFake(run: DiscordRun): Promise<FakeDiscord> {
  // Discord's own heartbeat interval, so heartbeats do not add noise to the samples.
  const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
  run.fakes.add(fake);
  return fake;
}

export async function stopFake(run: DiscordRun, fake: FakeDiscord) {
  run.fakes.delete(fake);
  await fake.stop();
}

/** gw's environment in `dir` (created, with Ann's allowlist), logged in to the fake at `apiUrl`. */
export function fakeGwEnv(dir: string, apiUrl: string, ann: FakeUser, extra: Record<string, string> = {}) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "allowlist.toml"),
    `[[entry]]\nsource = "community_chat"\nid = "${ann.id}"\nperson_id = "ann"\ndisplay_name = "Ann"\n`,
  );
  return gwEnv(dir, {
    GW_LOG_LEVEL: "info",
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: apiUrl,
    ...(CATCHUP_BOUND !== 200 ? { GW_COMMUNITY_CATCHUP_MAX_MESSAGES: String(CATCHUP_BOUND) } : {}),
    ...extra,
  });
}

export type GwStamps = Record<
  "process" | "imported" | "created" | "listening" | "start" | "started" | "ok",
  number
> & {
  all: number | null;
};

/** gw.ts started, ready (connector ok, and all expected messages stored) and calibrated. */
export async function startGw(name: string, env: Record<string, string>, timeoutMs = 120_000) {
  const tSpawn = now();
  const { child, ready } = await startChild(name, [join(HERE, "gw.ts")], env, timeoutMs);
  return {
    child,
    tSpawn,
    port: ready.ready as number,
    stamps: ready.stamps as GwStamps,
    stored: ready.stored as number,
    ingestMs: ready.ingestMs as number,
    count: ready.count as number,
  };
}

/** gw's own DDL for the messages table and its indexes (for the raw baselines' tables). */
export function messagesDdl(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (
      db
        .query(
          "SELECT sql FROM sqlite_master WHERE tbl_name = 'messages' AND sql IS NOT NULL ORDER BY type DESC",
        )
        .all() as { sql: string }[]
    ).map((x) => x.sql);
  } finally {
    db.close();
  }
}
