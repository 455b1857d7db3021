/**
 * `gw doctor`: one line per check (`ok | warn | fail: what — why — how to fix`) under a heading per scope
 * (this shell's configuration, the running service) or `--json` with each check's scope, against prepared
 * good and broken set-ups: files, the allowlist, chat.db, the fake Discord, a real `gw receiver` sent a
 * signed test delivery, the iMessage reader's state, the login service, the compiled binary. Exit 1 only
 * when a check fails. Its checks of a running `gw serve` are in doctor-running.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import type { Check } from "../../src/doctor/check.ts";
import { currentLogFile } from "../../src/log/logger.ts";
import { openStore } from "../../src/store/store.ts";
import { doctor, doctorJson, doctorSetup } from "../helpers/doctor.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { stopAtEnd } from "../helpers/gw-processes.ts";
import { freePort, isolatedEnv, ROOT, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import {
  fakeLaunchctl,
  launchctlPrintRunning,
  launchctlPrintStopped,
} from "../helpers/service-manager-fakes.ts";
import { tempDir } from "../helpers/temp.ts";

const running = stopAtEnd();

test("everything in place: exit 0, every line ok, in the `level: what` form", async () => {
  const { dir, env } = doctorSetup();
  const chatDb = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(chatDb), { recursive: true });
  openChatDbWriter(chatDb).close();
  Object.assign(env, { GW_CHAT_DB_PATH: chatDb, GW_OSASCRIPT_PATH: "/bin/sh" });
  const r = await doctor(env);
  expect(r.out).toContain("ok: allowlist");
  expect(r.out).toContain("2 entries");
  expect(r.out).toContain("ok: chat.db readable");
  // The writer's schema is a Sequoia subset: the line names the release its columns point to.
  expect(r.out).toMatch(
    /^ok: chat\.db readable at .* \(macOS 15 Sequoia schema, \d+ message columns; last ROWID 0\)$/m,
  );
  const [config, service] = r.out.trim().split("\n\n");
  expect(config?.split("\n")[0]).toBe(
    "this shell's configuration (what `gw serve` would run if started from here):",
  );
  expect(service?.split("\n")[0]).toBe(
    `the running service on 127.0.0.1:${env.GW_BIND_PORT} (what runs now, with the configuration it was started with):`,
  );
  for (const section of [config, service])
    for (const line of section?.split("\n").slice(1) ?? []) expect(line).toMatch(/^(ok|warn): /);
  expect(r.code).toBe(0);
});

test("each problem is a fail line with why and the fix, and exit 1", async () => {
  const { dir, env } = doctorSetup({}, '[[entry]]\nsource = "fax"\n');
  env.GW_CHAT_DB_PATH = join(dir, "nowhere/chat.db");
  mkdirSync(dirname(env.GW_DB_PATH as string), { recursive: true, mode: 0o755 });
  writeFileSync(env.GW_DB_PATH as string, "");
  chmodSync(env.GW_DB_PATH as string, 0o644);
  const r = await doctor(env);
  expect(r.code).toBe(1);
  expect(r.out).toMatch(
    /^fail: allowlist .* is invalid: entry 1: field "source".* — gw serve refuses to start with it \(exit 2\) — correct the file$/m,
  );
  expect(r.out).toMatch(
    /^fail: .*chat\.db.* — without it no iMessage reaches gw — System Settings → Privacy & Security → Full Disk Access/m,
  );
  expect(r.out).toMatch(
    /^fail: state files are readable by others: .* — they hold your messages — chmod 700/m,
  );
});

test("--json: the same checks with ids, levels, why and fix; a missing allowlist is a warning", async () => {
  const { env } = doctorSetup({}, null);
  const r = await doctorJson(env);
  expect(r.code).toBe(0);
  expect(r.report.ok).toBe(true);
  expect(r.byId("allowlist")).toEqual([
    {
      id: "allowlist",
      scope: "config",
      level: "warn",
      what: `no allowlist at ${env.GW_ALLOWLIST_PATH}`,
      why: "every sender is quarantined, so no agent sees a message",
      fix: expect.stringContaining("gw allow"),
    },
  ]);
  expect(r.byId("serve")[0]).toMatchObject({
    scope: "running",
    level: "warn",
    what: expect.stringContaining("gw serve is not running"),
  });
  // Nothing answers, so no token check: the "not running" line covers it.
  expect(r.byId("bearer-token")).toEqual([]);
});

describe("the webhook target gets one signed test delivery", () => {
  const SECRET = "doctor-secret-0123456789";
  async function receiver(secret: string) {
    const dir = tempDir();
    const port = freePort();
    const stamps = join(dir, "agent-ran");
    const agent = join(dir, "agent.sh");
    writeFileSync(agent, `#!/bin/sh\necho ran >> '${stamps}'\n`);
    chmodSync(agent, 0o755);
    const p = spawnGw(["receiver"], {
      ...isolatedEnv(dir),
      GW_WEBHOOK_SECRET: secret,
      GW_RECEIVER_BIND_PORT: String(port),
      GW_RECEIVER_AGENT_BIN: agent,
    });
    running.push(p);
    await waitForHealth(port);
    return { url: `http://127.0.0.1:${port}/webhook`, stamps, logDir: join(dir, "logs") };
  }

  test("gw receiver verifies it and runs nothing: ok", async () => {
    const rx = await receiver(SECRET);
    const { env } = doctorSetup({ GW_WEBHOOK_URL: rx.url, GW_WEBHOOK_SECRET: SECRET });
    const r = await doctorJson(env);
    expect(r.byId("webhook")[0]).toMatchObject({
      level: "ok",
      what: `webhook target ${rx.url} accepted a signed test delivery (HTTP 204)`,
    });
    await waitFor(
      () =>
        readFileSync(currentLogFile(rx.logDir, "receiver") ?? "/nonexistent", "utf8").includes(
          "signed test delivery",
        )
          ? true
          : undefined,
      "the receiver's log line",
    );
    expect(existsSync(rx.stamps)).toBe(false);
  });

  test("a receiver with another secret: fail, with the fix", async () => {
    const rx = await receiver("another-secret-9876543210");
    const { env } = doctorSetup({ GW_WEBHOOK_URL: rx.url, GW_WEBHOOK_SECRET: SECRET });
    const r = await doctorJson(env);
    expect(r.byId("webhook")[0]).toMatchObject({
      level: "fail",
      what: `webhook target ${rx.url} rejected the signature (HTTP 401)`,
      fix: "give gw serve and the receiver the same GW_WEBHOOK_SECRET",
    });
    expect(r.code).toBe(1);
  });

  test("nothing listening: fail; no secret: a configuration error", async () => {
    const url = `http://127.0.0.1:${freePort()}/webhook`;
    const down = await doctorJson(doctorSetup({ GW_WEBHOOK_URL: url, GW_WEBHOOK_SECRET: SECRET }).env);
    expect(down.byId("webhook")[0]).toMatchObject({
      level: "fail",
      what: expect.stringContaining(`nothing answers at GW_WEBHOOK_URL ${url}`),
    });
    const noSecret = spawnGw(["doctor"], doctorSetup({ GW_WEBHOOK_URL: url }).env);
    expect(await noSecret.exited).toBe(2);
    expect(noSecret.output().stderr).toContain("GW_WEBHOOK_SECRET is not set");
  });
});

test("a missing token is a configuration error (exit 2)", async () => {
  const { GW_BEARER_TOKEN: _, ...env } = isolatedEnv(tempDir());
  const gw = spawnGw(["doctor"], env);
  expect(await gw.exited).toBe(2);
  expect(gw.output().stderr).toContain("GW_BEARER_TOKEN");
});

describe("Discord", () => {
  const discord = fakeDiscords();
  const withDiscord = async (token: string, messageContentIntent = true) => {
    const fake = await discord.start({ messageContentIntent });
    return doctor(doctorSetup({ GW_COMMUNITY_BOT_TOKEN: token, GW_COMMUNITY_API_URL: fake.apiUrl }).env);
  };

  test("an accepted token and the Message Content intent: ok lines", async () => {
    const r = await withDiscord(FAKE_BOT_TOKEN);
    expect(r.out).toContain("ok: Discord bot token accepted (bot gw-test-bot");
    expect(r.out).toContain("ok: Discord Message Content intent enabled");
    expect(r.code).toBe(0);
  });

  test("a rejected token and a missing intent each fail with what to do", async () => {
    const bad = await withDiscord("not-the-token");
    expect(bad.out).toMatch(
      /^fail: Discord rejected GW_COMMUNITY_BOT_TOKEN — no Discord message reaches gw — .*Reset Token/m,
    );
    expect(bad.code).toBe(1);
    const noIntent = await withDiscord(FAKE_BOT_TOKEN, false);
    expect(noIntent.out).toMatch(/^fail: the Message Content intent is off.*Privileged Gateway Intents/m);
    expect(noIntent.code).toBe(1);
  });
});

test("the iMessage reader's held-back backfill and waiting messages are reported", async () => {
  const { env } = doctorSetup();
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
    "ok: iMessage: 1958 old row(s) re-inserted by iCloud were held back, not delivered (last at 2026-11-24T00:00:00.000Z",
  );
  expect(r.out).toContain("ok: iMessage: 1 message(s) waiting for attachments still downloading");
});

test("from the compiled binary too (--json)", async () => {
  const { ensureBinary } = await import("../helpers/process.ts");
  await ensureBinary();
  const { env } = doctorSetup();
  const gw = spawnGw(["doctor", "--json"], env, { binary: true });
  expect(await gw.exited).toBe(0);
  const report = JSON.parse(gw.output().stdout) as { ok: boolean; checks: Check[] };
  expect(report.ok).toBe(true);
  expect(report.checks.map((c) => c.id)).toContain("allowlist");
  expect(ROOT).toBeTruthy();
});

describe("the login service", () => {
  test("running: ok; loaded but stopped: fail with the fix; not installed: ok", async () => {
    const launchctl = fakeLaunchctl();
    const { dir, env } = doctorSetup({ GW_SERVICE_MANAGER: "launchd", PATH: launchctl.path });
    const none = await doctorJson(env);
    expect(none.byId("login-service")[0]).toMatchObject({
      level: "ok",
      what: expect.stringContaining("no login service installed"),
    });

    const plist = join(dir, "Library/LaunchAgents/dev.gw.serve.plist");
    mkdirSync(dirname(plist), { recursive: true });
    writeFileSync(plist, "<plist/>");
    writeFileSync(join(launchctl.dir, "loaded"), "");
    launchctl.setPrint(launchctlPrintRunning(dir, process.getuid?.() ?? 0, 4242, "/opt/gw/bin/gw"));
    const running = await doctorJson(env);
    expect(running.byId("login-service")[0]).toMatchObject({
      level: "ok",
      what: "the login service launchd dev.gw.serve is running (pid 4242, /opt/gw/bin/gw)",
    });

    launchctl.setPrint(launchctlPrintStopped(process.getuid?.() ?? 0, "/opt/gw/bin/gw"));
    const stopped = await doctorJson(env);
    expect(stopped.byId("login-service")[0]).toMatchObject({
      level: "fail",
      what: expect.stringContaining("is loaded but not running (last exit 78: EX_CONFIG)"),
      fix: expect.stringContaining("gw service install"),
    });
    expect(stopped.code).toBe(1);
  });
});
