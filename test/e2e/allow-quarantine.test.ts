/**
 * Sender approval on a live `gw serve` (from source and compiled): `gw quarantine` lists who wrote,
 * `gw allow` adds them to the allowlist file (the rest kept) and makes the running service reload
 * through its pid file; the sender's next message reaches agents while the stored ones stay
 * quarantined. And `gw docs` writes the API page without a service.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { chatDbServeEnv, FRIEND, FRIEND_CHAT, STRANGER, STRANGER_CHAT } from "../helpers/device.ts";
import {
  ensureBinary,
  isolatedEnv,
  spawnGw,
  waitFor,
  waitForAllowlistLoads,
  waitForHealth,
} from "../helpers/process.ts";
import { TOKEN } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

async function run(args: string[], env: Record<string, string>, binary: boolean) {
  const gw = spawnGw(args, env, { binary });
  const code = await gw.exited;
  return { code, ...gw.output() };
}

describe.each([false, true])("quarantine → allow → reload (compiled: %p)", (binary) => {
  test("a stranger is listed, allowed, and their next message reaches agents", async () => {
    if (binary) await ensureBinary();
    const { dir, chat, port, env } = chatDbServeEnv();
    const serve = spawnGw(["serve"], env, { binary });
    const unread = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/messages/unread?limit=100`, {
        headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "approver" },
      });
      return ((await res.json()) as { messages: { text: string }[] }).messages.map((m) => m.text);
    };
    try {
      await waitForHealth(port);
      expect(existsSync(join(dir, "data/gw.pid"))).toBe(true);
      expect(statSync(join(dir, "data/gw.pid")).mode & 0o777).toBe(0o600);
      chat.writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text: "hi, it's Bob, new number" });
      chat.writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text: "please add me \u001b[31mnow" });
      chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "from ann" });
      await waitFor(async () => ((await unread()).includes("from ann") ? true : undefined), "Ann's message");

      const q = await run(["quarantine"], env, binary);
      expect(q.code).toBe(0);
      expect(q.stdout).toContain(`device_messenger:\n  ${STRANGER}: 2 messages over iMessage, first `);
      expect(q.stdout).toContain("    why: not on the allowlist\n");
      expect(q.stdout).toContain('last: "please add me [31mnow"');
      expect(q.stdout).toContain(`allow: gw allow device_messenger '${STRANGER}' --person person-0199`);
      const json = JSON.parse((await run(["quarantine", "--json"], env, binary)).stdout) as {
        senders: { sender_id: string; count: number }[];
      };
      expect(json.senders).toMatchObject([{ sender_id: STRANGER, count: 2 }]);

      const before = readFileSync(env.GW_ALLOWLIST_PATH as string, "utf8");
      const a = await run(
        ["allow", "device_messenger", "+1 (555) 555-0199", "--person", "bob", "--name", "Bob"],
        env,
        binary,
      );
      expect(a.code).toBe(0);
      expect(a.stdout).toContain(`Allowed device_messenger ${STRANGER} as person "bob" (Bob)`);
      expect(a.stdout).toMatch(/gw serve \(pid \d+\) reloads the allowlist now/);
      const after = readFileSync(env.GW_ALLOWLIST_PATH as string, "utf8");
      expect(after.startsWith(before)).toBe(true);
      expect(after).toContain(`id = "${STRANGER}"`);

      const again = await run(["allow", "device_messenger", STRANGER, "--person", "bob"], env, binary);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("is already allowed");

      // The reload is applied by the running process (SIGHUP): wait for its log line, then write.
      await waitForAllowlistLoads(dir, 2);
      chat.writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text: "thanks!" });
      await waitFor(
        async () => ((await unread()).includes("thanks!") ? true : undefined),
        "Bob's new message",
      );
      const seen = await unread();
      expect(seen).not.toContain("hi, it's Bob, new number");
      expect((await run(["quarantine", "--json"], env, binary)).stdout).toContain('"count": 2');
    } finally {
      serve.proc.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
      chat.writer.close();
    }
    expect(existsSync(join(dir, "data/gw.pid"))).toBe(false);
  }, 30_000);
});

test("gw allow refuses bad arguments (exit 2) and works without a running service", async () => {
  const dir = tempDir();
  const env = isolatedEnv(dir);
  const bad = await run(["allow", "fax", "+15555550100", "--person", "x"], env, false);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("usage: gw allow");
  const noPerson = await run(["allow", "community_chat", "1234"], env, false);
  expect(noPerson.code).toBe(2);
  const ok = await run(["allow", "community_chat", "112233445566778899", "--person", "ann"], env, false);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain("gw serve is not running here");
  expect(statSync(env.GW_ALLOWLIST_PATH as string).mode & 0o777).toBe(0o600);
});

test("gw quarantine with no database yet lists nobody and creates nothing", async () => {
  const dir = tempDir();
  const env = isolatedEnv(dir);
  const q = await run(["quarantine"], env, false);
  expect(q).toMatchObject({ code: 0, stdout: "No quarantined senders.\n" });
  expect(existsSync(env.GW_DB_PATH as string)).toBe(false);
});

test.each([false, true])(
  "gw docs writes this version's API page without a service (compiled: %p)",
  async (binary) => {
    if (binary) await ensureBinary();
    const dir = tempDir();
    const env = isolatedEnv(dir);
    const swagger = await run(["docs"], env, binary);
    expect(swagger.code).toBe(0);
    const path = swagger.stdout.trim();
    expect(path).toMatch(/\/data\/docs\/gw-\d+\.\d+\.\d+\.html$/);
    const html = readFileSync(path, "utf8");
    expect(html).toContain("SwaggerUIBundle");
    // The viewer's own bundle (1.7 MB) and stylesheet are inlined, read from the files the binary embeds.
    expect(html.length).toBeGreaterThan(1_900_000);
    expect(html).toContain('"/messages/unread"');
    const out = join(dir, "api.html");
    const redoc = await run(["docs", "--redoc", "--out", out], env, binary);
    expect(redoc).toMatchObject({ code: 0, stdout: `${out}\n` });
    expect(readFileSync(out, "utf8")).toContain("Redoc.init");
    expect(readFileSync(out, "utf8").length).toBeGreaterThan(900_000);
    expect((await run(["docs", "--bogus"], env, binary)).code).toBe(2);
  },
);
