/**
 * How the compiled `gw serve` ends, and what it survives (lifecycle.ts), against the fake Discord in a
 * process of its own: gateway frames that make @discordjs/ws raise an unhandled rejection restart the
 * Discord connector and the process keeps serving; a Discord that stops answering (SIGSTOP: not even the
 * close handshake) does not hold the stop; a second SIGTERM (past the same-signal window) ends at once; the
 * ordered stop is bounded at 10 s; and nothing acknowledged is lost either way.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Subprocess } from "bun";
import { SAME_SIGNAL_WINDOW_MS } from "../../src/commands/lifecycle.ts";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import { entry, type Gw, startGw, unread, waitForLog } from "../evidence/faults/harness.ts";
import { ensureBinary, ROOT, waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

interface FakeProcess {
  proc: Subprocess<"pipe", "pipe", "inherit">;
  apiUrl: string;
  friend: string;
  general: string;
  say(channelId: string, text: string): void;
  raw(frame: unknown): void;
}

const running: Subprocess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) {
    p.kill("SIGCONT");
    p.kill("SIGKILL");
  }
});

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();

async function fakeDiscordProcess(): Promise<FakeProcess> {
  const proc = Bun.spawn([process.execPath, join(ROOT, "test/fakes/fake-discord-process.ts")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  running.push(proc);
  const first = await proc.stdout.getReader().read();
  const info = JSON.parse(new TextDecoder().decode(first.value)) as Omit<FakeProcess, "proc" | "say" | "raw">;
  const command = (c: object) => {
    proc.stdin.write(`${JSON.stringify(c)}\n`);
    proc.stdin.flush();
  };
  return {
    proc,
    ...info,
    say: (channelId, text) => command({ say: channelId, text }),
    raw: (frame) => command({ raw: JSON.stringify(frame) }),
  };
}

async function serve(fake: FakeProcess, env: Record<string, string> = {}, dir = tempDir()): Promise<Gw> {
  const gw = await startGw({
    dir,
    binary: true,
    allowlist: entry("community_chat", fake.friend, "ann"),
    env: { GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN, GW_COMMUNITY_API_URL: fake.apiUrl, ...env },
  });
  running.push(gw.proc.proc);
  await discordOk(gw);
  return gw;
}

const discordOk = (gw: Gw) =>
  waitFor(async () => {
    const h = (await gw.health()).body as { connectors: { community_chat: { state: string } } };
    return h.connectors.community_chat.state === "ok" ? true : undefined;
  }, "community_chat ok");

/** Posts `text` as the friend and waits until it is unread at gw. */
async function delivered(gw: Gw, fake: FakeProcess, text: string) {
  fake.say(fake.general, text);
  await waitFor(async () => ((await unread(gw)).some((m) => m.text === text) ? true : undefined), text);
}

describe("library faults in a compiled gw serve", () => {
  test("op 10 or op 9 without d and READY with d null: the connector restarts, nothing is lost", async () => {
    const fake = await fakeDiscordProcess();
    const gw = await serve(fake);
    await delivered(gw, fake, "before");
    const frames = [{ op: 10 }, { op: 9 }, { op: 0, t: "READY", s: 1000, d: null }];
    for (const [i, frame] of frames.entries()) {
      fake.raw(frame);
      await waitFor(
        () =>
          gw.logs().filter((l) => l.msg === "restarting the Discord connection after a library error")
            .length ===
          i + 1
            ? true
            : undefined,
        `the restart after ${JSON.stringify(frame)}`,
      );
      await discordOk(gw);
      await delivered(gw, fake, `after frame ${i}`);
      const contained = gw
        .logs()
        .filter((l) => l.msg === "unhandled rejection inside a platform library: its connector restarts");
      expect(contained).toHaveLength(i + 1);
      expect(contained[i]).toMatchObject({ component: "@discordjs/ws" });
      expect(String(contained[i]?.frame)).toContain("node_modules/@discordjs/ws/");
    }
    const texts = (await unread(gw)).map((m) => m.text);
    expect(texts).toEqual(["before", "after frame 0", "after frame 1", "after frame 2"]);
    expect(gw.logs().filter((l) => l.level >= 50)).toEqual([]);
    expect(await gw.stop()).toBe(0);
    expect(existsSync(join(dirname(gw.env.GW_DB_PATH as string), "gw.pid"))).toBe(false);
  });
});

describe("stopping", () => {
  test("a Discord that stops answering does not hold the stop: exit 0 within seconds", async () => {
    const fake = await fakeDiscordProcess();
    const gw = await serve(fake);
    await delivered(gw, fake, "acknowledged");
    fake.proc.kill("SIGSTOP");
    const t0 = performance.now();
    expect(await gw.stop()).toBe(0);
    expect(performance.now() - t0).toBeLessThan(8_000);
    expect(gw.logs().some((l) => l.msg === "closing the Discord client took too long; left behind")).toBe(
      true,
    );
    expect(gw.db((db) => db.query("SELECT text FROM messages").all())).toEqual([{ text: "acknowledged" }]);
  });

  test("a second SIGTERM ends at once, exit 1, pid file removed", async () => {
    const fake = await fakeDiscordProcess();
    const gw = await serve(fake);
    await delivered(gw, fake, "kept");
    fake.proc.kill("SIGSTOP");
    gw.proc.proc.kill("SIGTERM");
    await waitForLog(gw, (l) => l.msg === "stopping", "the stop began");
    await Bun.sleep(SAME_SIGNAL_WINDOW_MS); // sooner, the same kind of signal counts as the first again
    const t0 = performance.now();
    gw.proc.proc.kill("SIGTERM");
    expect(await gw.proc.exited).toBe(1);
    expect(performance.now() - t0).toBeLessThan(1_500);
    expect(existsSync(join(dirname(gw.env.GW_DB_PATH as string), "gw.pid"))).toBe(false);
    expect(gw.db((db) => db.query("SELECT text FROM messages").all())).toEqual([{ text: "kept" }]);
  });

  test("the ordered stop is bounded at 10 s (a webhook attempt that hangs); what was acknowledged is kept and delivered after a restart", async () => {
    let attempts = 0;
    const hanging = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        attempts += 1;
        return new Promise<Response>(() => {});
      },
    });
    const fake = await fakeDiscordProcess();
    const dir = tempDir();
    const webhooks = {
      GW_WEBHOOK_URL: `http://127.0.0.1:${hanging.port}/hook`,
      GW_WEBHOOK_SECRET: "s".repeat(32),
    };
    const gw = await serve(fake, { ...webhooks, GW_WEBHOOK_TIMEOUT_MS: "60000" }, dir);
    try {
      await delivered(gw, fake, "in flight");
      await waitFor(() => (attempts === 1 ? true : undefined), "the webhook attempt in flight");
      const t0 = performance.now();
      gw.proc.proc.kill("SIGTERM");
      expect(await gw.proc.exited).toBe(1);
      const took = performance.now() - t0;
      expect(took).toBeGreaterThanOrEqual(9_500);
      expect(took).toBeLessThan(13_000);
      expect(gw.logs().some((l) => l.msg.startsWith("the ordered stop did not finish in time"))).toBe(true);
    } finally {
      hanging.stop(true);
    }
    // The next start finds the message stored and its delivery still due; a target that answers gets it.
    const received: string[] = [];
    const sink = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        received.push(await req.text());
        return new Response(null, { status: 204 });
      },
    });
    try {
      const again = await serve(
        fake,
        { ...webhooks, GW_WEBHOOK_URL: `http://127.0.0.1:${sink.port}/hook` },
        dir,
      );
      expect((await unread(again)).map((m) => m.text)).toEqual(["in flight"]);
      await waitFor(() => (received.length > 0 ? true : undefined), "the redelivery");
      expect(JSON.parse(received[0] as string)).toMatchObject({ text: "in flight" });
      expect(await again.stop()).toBe(0);
    } finally {
      sink.stop(true);
    }
  }, 40_000);
});
