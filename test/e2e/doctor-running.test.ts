/**
 * `gw doctor`'s checks of the running service: a running `gw serve`'s connector states (an error state
 * fails), the port taken by another program, and a `gw serve` started with another configuration than
 * this shell's: whether it accepts this shell's token (refused: fail, the fix named, the token never
 * printed; accepted: nothing marked read), the connectors it runs that this shell's would not, and each
 * check's scope in --json. Exit 1 only when a check fails. The configuration's checks: doctor.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_BOT_TOKEN, type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { chatDbServeEnv, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { doctor, doctorJson, doctorSetup } from "../helpers/doctor.ts";
import { stopAtEnd } from "../helpers/gw-processes.ts";
import { spawnGw, waitFor, waitForConnectors } from "../helpers/process.ts";
import { TOKEN } from "../helpers/service.ts";

const running = stopAtEnd();

test("a running gw serve: its connector states are reported; an error state fails", async () => {
  const fake = await startFakeDiscord();
  try {
    const { env } = doctorSetup({ GW_COMMUNITY_BOT_TOKEN: "wrong-token", GW_COMMUNITY_API_URL: fake.apiUrl });
    running.push(spawnGw(["serve"], env));
    await waitForConnectors(
      Number(env.GW_BIND_PORT),
      { community_chat: "error" },
      "the Discord connector to report the rejected token",
    );
    const r = await doctorJson(env);
    expect(r.byId("serve")[0]).toMatchObject({
      level: "ok",
      what: expect.stringMatching(/^gw \d+\.\d+\.\d+ is serving on 127\.0\.0\.1:\d+/),
    });
    expect(r.byId("serve-community_chat")[0]).toMatchObject({
      level: "fail",
      what: "running gw serve: community_chat is error",
      why: expect.stringContaining("token"),
    });
    expect(r.byId("serve-device_messenger")[0]?.level).toBe("ok");
    expect(r.code).toBe(1);
  } finally {
    await fake.stop();
  }
});

test("the port taken by another program fails", async () => {
  const other = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("not gw") });
  try {
    const { env } = doctorSetup({ GW_BIND_PORT: String(other.port) });
    const r = await doctorJson(env);
    expect(r.byId("serve")[0]).toMatchObject({ level: "fail", fix: "set GW_BIND_PORT to a free port" });
  } finally {
    other.stop(true);
  }
});

describe("a gw serve started with another configuration than this shell's", () => {
  // The running service reads a chat.db and connects to a (fake) Discord; the shells that run gw doctor
  // below have neither setting, only the same GW_BIND_PORT and a right or wrong GW_BEARER_TOKEN.
  let fake: FakeDiscord;
  let port: number;
  const WRONG = "wrong-token-5f3a9c0d1e2b4a67";
  const shell = (token: string) => doctorSetup({ GW_BIND_PORT: String(port), GW_BEARER_TOKEN: token }).env;
  const linux = process.platform !== "darwin"; // on macOS this shell's configuration reads chat.db too

  beforeAll(async () => {
    fake = await startFakeDiscord();
    const served = chatDbServeEnv({
      GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
      GW_COMMUNITY_API_URL: fake.apiUrl,
      GW_DEVICE_POLL_INTERVAL_MS: "50",
    });
    port = served.port;
    running.push(spawnGw(["serve"], served.env));
    await waitForConnectors(
      port,
      { community_chat: "ok", device_messenger: "ok" },
      "both connectors of the running service to be ok",
    );
    served.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "unread before doctor" });
    await waitFor(async () => ((await unreadOf("gw-doctor")).length === 1 ? true : undefined), "the message");
  });
  afterAll(() => fake.stop());

  async function unreadOf(agent: string): Promise<unknown[]> {
    const res = await fetch(`http://127.0.0.1:${port}/messages/unread?limit=10`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": agent },
    });
    return ((await res.json()) as { messages: unknown[] }).messages;
  }

  test("a wrong GW_BEARER_TOKEN fails, names the fix, and never prints the token (exit 1)", async () => {
    const env = shell(WRONG);
    const r = await doctor(env);
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `fail: the running service on 127.0.0.1:${port} rejects this shell's GW_BEARER_TOKEN (HTTP 401) — agents get 401: it was started with another token — use the token gw serve was started with: GW_BEARER_TOKEN in ${env.HOME}/.config/gw/env when the login service runs it (gw service install), or the one gw demo's banner prints`,
    );
    const json = await doctorJson(env);
    expect(json.code).toBe(1);
    expect(json.byId("bearer-token")).toEqual([
      {
        id: "bearer-token",
        scope: "running",
        level: "fail",
        what: `the running service on 127.0.0.1:${port} rejects this shell's GW_BEARER_TOKEN (HTTP 401)`,
        why: "agents get 401: it was started with another token",
        fix: expect.stringContaining("use the token gw serve was started with"),
      },
    ]);
    for (const out of [r.out, JSON.stringify(json.report)]) expect(out).not.toContain(WRONG);
  });

  test("the right token is accepted, and the request marks nothing read", async () => {
    const r = await doctorJson(shell(TOKEN));
    expect(r.byId("bearer-token")).toEqual([
      {
        id: "bearer-token",
        scope: "running",
        level: "ok",
        what: `GW_BEARER_TOKEN is accepted by the running service on 127.0.0.1:${port}`,
      },
    ]);
    expect(r.code).toBe(0);
    expect(await unreadOf("gw-doctor")).toHaveLength(1);
  });

  test("connectors it runs and this configuration would not: one line each, no contradicting pair", async () => {
    const r = await doctor(shell(TOKEN));
    expect(r.code).toBe(0);
    const other = "it was started with another configuration";
    expect(r.out).toContain(
      `ok: the running service on 127.0.0.1:${port} connects to Discord (community_chat ok); this shell's configuration would not (GW_COMMUNITY_BOT_TOKEN unset): ${other}\n`,
    );
    // Before: "ok: Discord is off …" beside "ok: running gw serve: community_chat is ok".
    expect(r.out).not.toContain("Discord is off");
    expect(r.out).not.toContain("running gw serve: community_chat");
    if (linux) {
      expect(r.out).toContain(
        `ok: the running service on 127.0.0.1:${port} reads iMessage (device_messenger ok); this shell's configuration would not (GW_CHAT_DB_PATH unset): ${other}\n`,
      );
      expect(r.out).not.toContain("iMessage is off");
      expect(r.out).not.toContain("running gw serve: device_messenger");
    }
    // The clarifying lines stand under the running service's heading, after this shell's configuration.
    const running = r.out.indexOf(`the running service on 127.0.0.1:${port} (what runs now`);
    expect(r.out.indexOf("this shell's configuration (what `gw serve` would run")).toBe(0);
    expect(running).toBeGreaterThan(0);
    expect(r.out.indexOf("connects to Discord")).toBeGreaterThan(running);
  });

  test("--json gives each check its scope: config or running", async () => {
    const r = await doctorJson(shell(TOKEN));
    const scopes = Object.fromEntries(r.report.checks.map((c) => [c.id, c.scope]));
    expect(scopes).toMatchObject({
      config: "config",
      state: "config",
      allowlist: "config",
      webhook: "config",
      serve: "running",
      "bearer-token": "running",
      "serve-community_chat": "running",
      "serve-device_messenger": "running",
      "login-service": "running",
    });
    for (const c of r.report.checks) expect(["config", "running"]).toContain(c.scope as string);
    expect(scopes.discord).toBeUndefined();
    if (linux) expect(scopes.imessage).toBeUndefined();
  });
});
