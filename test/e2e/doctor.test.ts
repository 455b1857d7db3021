/** `gw doctor`: one line per check, a fix for each failure, exit 0 only when everything passes. */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { FAKE_BOT_TOKEN, type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { openStore } from "../../src/store/store.ts";
import { freePort, isolatedEnv, spawnGw, waitForHealth } from "../helpers/process.ts";
import { ALLOWLIST } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

async function doctor(env: Record<string, string>) {
  const gw = spawnGw(["doctor"], env);
  const code = await gw.exited;
  return { code, out: gw.output().stdout };
}

test("everything in place: exit 0, every line ok", async () => {
  const dir = tempDir();
  const chatDb = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(chatDb), { recursive: true });
  openChatDbWriter(chatDb).close();
  const env = isolatedEnv(dir, {
    GW_CHAT_DB_PATH: chatDb,
    GW_OSASCRIPT_PATH: "/bin/sh",
    GW_BIND_PORT: String(freePort()),
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const r = await doctor(env);
  expect(r.out).toContain("allowlist");
  expect(r.out).toContain("2 entries");
  expect(r.out).toContain("chat.db readable");
  expect(r.out).not.toContain("FIX");
  expect(r.code).toBe(0);
});

test("each problem gets a FIX line with what to do, and exit 1", async () => {
  const dir = tempDir();
  const env = isolatedEnv(dir, {
    GW_CHAT_DB_PATH: join(dir, "nowhere/chat.db"),
    GW_BIND_PORT: String(freePort()),
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, '[[entry]]\nsource = "fax"\n');
  mkdirSync(dirname(env.GW_DB_PATH as string), { recursive: true, mode: 0o755 });
  writeFileSync(env.GW_DB_PATH as string, "");
  chmodSync(env.GW_DB_PATH as string, 0o644);
  const r = await doctor(env);
  expect(r.code).toBe(1);
  expect(r.out).toContain("FIX  allowlist");
  expect(r.out).toContain('entry 1: field "source"');
  expect(r.out).toContain("Full Disk Access");
  expect(r.out).toContain("FIX  state files are readable by others");
  expect(r.out).toContain("chmod 700");
});

test("a gw already serving on the port is recognised", async () => {
  const dir = tempDir();
  const port = String(freePort());
  const env = isolatedEnv(dir, { GW_BIND_PORT: port });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const serve = spawnGw(["serve"], env);
  try {
    await waitForHealth(Number(port));
    const r = await doctor(env);
    expect(r.out).toMatch(/ok {3}gw 0\.\d+\.\d+ is already serving on 127\.0\.0\.1:\d+ \(status ok\)/);
    expect(r.code).toBe(0);
  } finally {
    serve.proc.kill("SIGTERM");
    await serve.exited;
  }
});

test("a missing token is a configuration error (exit 2)", async () => {
  const { GW_BEARER_TOKEN: _, ...env } = isolatedEnv(tempDir());
  const gw = spawnGw(["doctor"], env);
  expect(await gw.exited).toBe(2);
  expect(gw.output().stderr).toContain("GW_BEARER_TOKEN");
});

describe("Discord", () => {
  const fakes: FakeDiscord[] = [];
  afterAll(async () => {
    for (const f of fakes) await f.stop();
  });
  const withDiscord = async (token: string, messageContentIntent = true) => {
    const fake = await startFakeDiscord({ messageContentIntent });
    fakes.push(fake);
    const env = isolatedEnv(tempDir(), {
      GW_BIND_PORT: String(freePort()),
      GW_COMMUNITY_BOT_TOKEN: token,
      GW_COMMUNITY_API_URL: fake.apiUrl,
    });
    writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
    return doctor(env);
  };

  test("an accepted token and the Message Content intent: ok lines", async () => {
    const r = await withDiscord(FAKE_BOT_TOKEN);
    expect(r.out).toContain("ok   Discord bot token accepted (bot gw-test-bot");
    expect(r.out).toContain("ok   Discord Message Content intent enabled");
    expect(r.code).toBe(0);
  });

  test("a rejected token and a missing intent each get a FIX line", async () => {
    const bad = await withDiscord("not-the-token");
    expect(bad.out).toContain("FIX  Discord rejected GW_COMMUNITY_BOT_TOKEN");
    expect(bad.out).toContain("Reset Token");
    expect(bad.code).toBe(1);
    const noIntent = await withDiscord(FAKE_BOT_TOKEN, false);
    expect(noIntent.out).toContain("FIX  the Message Content intent is off");
    expect(noIntent.out).toContain("Privileged Gateway Intents");
    expect(noIntent.code).toBe(1);
  });
});

test("the iMessage reader's held-back backfill and waiting messages are reported", async () => {
  const dir = tempDir();
  const env = isolatedEnv(dir, { GW_BIND_PORT: String(freePort()) });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const store = openStore(env.GW_DB_PATH as string);
  const state = {
    highWater: 1,
    pending: [{ rowid: 9, since: 1 }],
    fenced: 1958,
    fencedLastAt: Date.UTC(2026, 10, 24),
  };
  store.cursors.set("device_messenger", "10", 1, JSON.stringify(state));
  store.close();
  const r = await doctor(env);
  expect(r.out).toContain(
    "ok   iMessage: 1958 old row(s) re-inserted by iCloud were held back, not delivered (last at 2026-11-24T00:00:00.000Z",
  );
  expect(r.out).toContain("ok   iMessage: 1 message(s) waiting for attachments still downloading");
});
