/**
 * The webhook receiver with real agent processes (the fake agent): what is accepted and refused, the
 * 204 that never waits for the agent, one run per delivery id, strict order and exclusivity per
 * channel, channels in parallel, the time budget with the whole process group stopped, the prompt
 * re-read per run, the exact command lines, the agent's environment and its private MCP config,
 * worker counts with idle eviction, and shutdown.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GW_TOOLS } from "../../src/receiver/agent-command.ts";
import { DEFAULT_PROMPT } from "../../src/receiver/default-prompt.ts";
import { pingDelivery } from "../../src/webhooks/sign.ts";
import { isAlive, waitFor } from "../helpers/process.ts";
import { type AgentRecord, envelopeOf, receiverUnderTest, SECRET } from "../helpers/receiver.ts";
import { TOKEN } from "../helpers/service.ts";

const starts = (records: AgentRecord[]) => records.filter((r) => r.event === "start");
const ends = (records: AgentRecord[]) => records.filter((r) => r.event === "end");
const textOf = (r: AgentRecord) =>
  JSON.parse((r.stdin as string).slice((r.stdin as string).indexOf("{"))).text;

describe("what is accepted", () => {
  test.each([
    ["a bad signature", { secret: "another-secret" }, 401, "UNAUTHORIZED"],
    ["a missing signature", { headers: { "x-gw-signature": null } }, 400, "VALIDATION_FAILED"],
    ["a missing delivery id", { headers: { "x-gw-delivery-id": null } }, 400, "VALIDATION_FAILED"],
    ["a stale timestamp (6 min)", { timestampS: Math.floor(Date.now() / 1000) - 360 }, 401, "UNAUTHORIZED"],
    [
      "a timestamp from the future (6 min)",
      { timestampS: Math.floor(Date.now() / 1000) + 360 },
      401,
      "UNAUTHORIZED",
    ],
    [
      "a changed delivery id under the original signature",
      { headers: { "x-gw-delivery-id": "other" } },
      401,
      "UNAUTHORIZED",
    ],
    ["a tampered webhook-signature", { headers: { "webhook-signature": "v1,AAAA" } }, 401, "UNAUTHORIZED"],
    ["half the Standard Webhooks headers", { headers: { "webhook-signature": null } }, 401, "UNAUTHORIZED"],
  ] as const)("%s → %i %s, and no run", async (_what, o, status, code) => {
    const r = receiverUnderTest();
    const res = await r.deliver(envelopeOf(), o);
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({
      error: { code, message: expect.any(String), details: expect.any(Object) },
    });
    expect((await r.health()).workers).toBe(0);
  });

  test("a timestamp 4 minutes off is accepted; no Standard Webhooks headers at all is accepted", async () => {
    const r = receiverUnderTest();
    const skewed = await r.deliver(envelopeOf({ text: "a" }), {
      timestampS: Math.floor(Date.now() / 1000) - 240,
    });
    expect(skewed.status).toBe(204);
    const bare = await r.deliver(envelopeOf({ text: "b" }), {
      headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    });
    expect(bare.status).toBe(204);
    await waitFor(() => (ends(r.agent.records()).length === 2 ? true : undefined), "two runs");
  });

  test("malformed JSON and a body that is not an envelope are 400 (signed, so read after the signature)", async () => {
    const r = receiverUnderTest();
    const notJson = await r.deliver("{not json");
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { code: "VALIDATION_FAILED" } });
    const notEnvelope = await r.deliver(JSON.stringify({ hello: "world" }));
    expect(notEnvelope.status).toBe(400);
    expect(await notEnvelope.json()).toMatchObject({
      error: { code: "VALIDATION_FAILED", details: { field: expect.any(String) } },
    });
  });

  test("only POST /webhook and GET /healthz exist", async () => {
    const r = receiverUnderTest();
    const res = await r.receiver.fetch(new Request("http://localhost/typing", { method: "POST" }));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "NOT_FOUND" } });
    expect((await r.receiver.fetch(new Request("http://localhost/webhook"))).status).toBe(404);
  });
});

describe("runs", () => {
  test("204 comes at once while the agent still runs; the run gets the envelope on stdin", async () => {
    const r = receiverUnderTest();
    const envelope = envelopeOf({ text: "sleep=800" });
    const t0 = performance.now();
    const res = await r.deliver(envelope);
    const answered = performance.now() - t0;
    expect(res.status).toBe(204);
    expect(answered).toBeLessThan(50);
    const [start] = await waitFor(() => {
      const s = starts(r.agent.records());
      return s.length ? s : undefined;
    }, "the agent to start");
    expect(ends(r.agent.records())).toHaveLength(0);
    expect(start?.stdin).toContain("untrusted");
    const stdin = start?.stdin ?? "";
    expect(JSON.parse(stdin.slice(stdin.indexOf("{")))).toEqual(envelope);
    expect(JSON.stringify(start?.argv)).not.toContain("sleep=800");
    expect((await r.health()).running).toBe(1);
  });

  test("a delivery id seen before is answered 204 and not run again", async () => {
    const r = receiverUnderTest();
    const envelope = envelopeOf();
    expect((await r.deliver(envelope, { deliveryId: "d-1" })).status).toBe(204);
    expect((await r.deliver(envelope, { deliveryId: "d-1" })).status).toBe(204);
    await waitFor(() => (ends(r.agent.records()).length === 1 ? true : undefined), "the run");
    await Bun.sleep(200);
    expect(starts(r.agent.records())).toHaveLength(1);
  });

  test("a signed test delivery (gw doctor's ping) is 204 and runs nothing; an unsigned one is 401", async () => {
    const r = receiverUnderTest();
    const ping = pingDelivery(SECRET, crypto.randomUUID(), Math.floor(Date.now() / 1000));
    const send = (headers: Record<string, string>) =>
      r.receiver.fetch(new Request("http://localhost/webhook", { method: "POST", headers, body: ping.body }));
    expect((await send(ping.headers)).status).toBe(204);
    expect((await send({ ...ping.headers, "x-gw-signature": "sha256=00" })).status).toBe(401);
    // A real delivery afterwards runs: the ping left nothing queued before it.
    expect((await r.deliver(envelopeOf({ text: "after the ping" }))).status).toBe(204);
    const done = await waitFor(
      () => (ends(r.agent.records()).length === 1 ? r.agent.records() : undefined),
      "the run",
    );
    expect(starts(done).map(textOf)).toEqual(["after the ping"]);
  });

  test("a burst of 50 in one channel runs one at a time, in arrival order", async () => {
    const r = receiverUnderTest();
    for (let i = 0; i < 50; i++) expect((await r.deliver(envelopeOf({ text: `n${i}` }))).status).toBe(204);
    expect((await r.health()).queued).toBeGreaterThan(40);
    const done = await waitFor(
      () => {
        const e = ends(r.agent.records());
        return e.length === 50 ? r.agent.records() : undefined;
      },
      "50 runs",
      60_000,
    );
    const s = starts(done);
    expect(s.map(textOf)).toEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
    const endOf = new Map(ends(done).map((e) => [e.pid, e.t]));
    for (let i = 1; i < s.length; i++)
      expect(s[i]?.t).toBeGreaterThanOrEqual(endOf.get(s[i - 1]?.pid as number) as number);
  }, 60_000);

  test("different channels run in parallel", async () => {
    const r = receiverUnderTest();
    const t0 = performance.now();
    for (const c of ["1", "2", "3"])
      await r.deliver(envelopeOf({ channel_id: `community_chat:channel:${c}`, text: "sleep=1000" }));
    await waitFor(() => (starts(r.agent.records()).length === 3 ? true : undefined), "three starts");
    expect(await r.health()).toMatchObject({ workers: 3, running: 3, queued: 0 });
    await waitFor(() => (ends(r.agent.records()).length === 3 ? true : undefined), "three ends");
    expect(performance.now() - t0).toBeLessThan(2_500);
  });

  test("past the time budget the agent's whole process group is stopped, and the channel moves on", async () => {
    const r = receiverUnderTest({ env: { GW_RECEIVER_AGENT_TIMEOUT_SECONDS: "0.5" } });
    await r.deliver(envelopeOf({ text: "grandchild ignore-term" }));
    await r.deliver(envelopeOf({ text: "next" }));
    const next = await waitFor(
      () => starts(r.agent.records()).find((s) => textOf(s) === "next"),
      "the next run",
    );
    const first = starts(r.agent.records())[0] as AgentRecord;
    const grandchild = r.agent.records().find((x) => x.event === "grandchild")?.child as number;
    expect(first.pgid).toBe(first.pid);
    expect(isAlive(first.pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
    expect(next.t - first.t).toBeLessThan(500 + 300 + 1_500);
    expect(r.log.entries.some((e) => e.msg === "agent run passed its time budget and was stopped")).toBe(
      true,
    );
  });

  test("a failing agent is logged, nothing else happens", async () => {
    const r = receiverUnderTest();
    await r.deliver(envelopeOf({ text: "exit=3" }));
    await waitFor(
      () => (r.log.entries.some((e) => e.msg === "agent run failed") ? true : undefined),
      "the log line",
    );
    expect(r.log.entries.find((e) => e.msg === "agent run failed")?.obj).toMatchObject({ exit_code: 3 });
  });
});

describe("the agent's command, prompt, environment and tools", () => {
  test("the default command line, exactly", async () => {
    const r = receiverUnderTest();
    await r.deliver(envelopeOf());
    const [s] = await waitFor(
      () => (ends(r.agent.records()).length ? starts(r.agent.records()) : undefined),
      "a run",
    );
    const configPath = join(s?.cwd as string, "mcp.json");
    expect(s?.argv).toEqual([
      "-p",
      "--system-prompt",
      DEFAULT_PROMPT,
      "--mcp-config",
      configPath,
      "--strict-mcp-config",
      "--no-session-persistence",
      "--tools",
      "",
      "--allowedTools",
      GW_TOOLS.map((t) => `mcp__gw__${t}`).join(","),
    ]);
    expect(GW_TOOLS.length).toBe(4);
  });

  test("dangerous mode replaces the tool restriction with the permission-skipping flag", async () => {
    const r = receiverUnderTest({ env: { GW_RECEIVER_DANGEROUS: "1" } });
    await r.deliver(envelopeOf());
    const [s] = await waitFor(
      () => (ends(r.agent.records()).length ? starts(r.agent.records()) : undefined),
      "a run",
    );
    expect(s?.argv?.slice(4)).toEqual([
      join(s?.cwd as string, "mcp.json"),
      "--strict-mcp-config",
      "--no-session-persistence",
      "--dangerously-skip-permissions",
    ]);
  });

  test("the prompt file is read again for every run (without one, the default: see the command line test)", async () => {
    const r = receiverUnderTest();
    const promptFile = r.config.receiverAgentPromptFile;
    const promptOf = (s: AgentRecord) => s.argv?.[(s.argv?.indexOf("--system-prompt") ?? 0) + 1];
    const runAndGet = async (n: number) => {
      await r.deliver(envelopeOf({ text: `run${n}` }));
      return waitFor(
        () => (ends(r.agent.records()).length === n ? starts(r.agent.records())[n - 1] : undefined),
        `run ${n}`,
      );
    };
    writeFileSync(promptFile, "Prompt A");
    expect(promptOf(await runAndGet(1))).toBe("Prompt A");
    writeFileSync(promptFile, "Prompt B");
    expect(promptOf(await runAndGet(2))).toBe("Prompt B");
  });

  test("the agent gets an allowlisted environment; gw's secrets reach only its private MCP config (0600, removed after)", async () => {
    const r = receiverUnderTest({
      env: {
        FOO: "bar",
        ANTHROPIC_API_KEY: "sk-test",
        LANG: "C.UTF-8",
        GW_RECEIVER_AGENT_ENV: "ANTHROPIC_API_KEY",
      },
    });
    await r.deliver(envelopeOf());
    const [s] = await waitFor(
      () => (ends(r.agent.records()).length ? starts(r.agent.records()) : undefined),
      "a run",
    );
    // PWD is set by the wrapper shell that starts the fake agent, not by gw.
    const { PWD: _pwd, ...env } = s?.env ?? {};
    expect(env).toEqual({
      PATH: r.env.PATH as string,
      HOME: r.env.HOME as string,
      LANG: "C.UTF-8",
      ANTHROPIC_API_KEY: "sk-test",
      GW_BASE_URL: "http://127.0.0.1:8080",
      GW_AGENT_ID: "gw-receiver",
    });
    expect(JSON.stringify(s?.env)).not.toContain(SECRET);
    expect(JSON.stringify(s?.env)).not.toContain(TOKEN);
    expect(s?.mcpConfigMode).toBe(0o600);
    expect(s?.mcpConfig).toEqual({
      mcpServers: {
        gw: {
          command: process.execPath,
          args: [join(import.meta.dir, "../../src/main.ts"), "mcp"],
          env: { GW_BASE_URL: "http://127.0.0.1:8080", GW_BEARER_TOKEN: TOKEN, GW_AGENT_ID: "gw-receiver" },
        },
      },
    });
    expect(JSON.stringify(s?.mcpConfig)).not.toContain(SECRET);
    await waitFor(() => (existsSync(s?.cwd as string) ? undefined : true), "the run's folder to be removed");
  });
});

describe("workers and shutdown", () => {
  test("/healthz counts workers; an idle worker is evicted after its TTL", async () => {
    const r = receiverUnderTest({ env: { GW_RECEIVER_IDLE_WORKER_TTL_SECONDS: "0.3" } });
    expect(await r.health()).toMatchObject({ status: "ok", workers: 0, running: 0, queued: 0 });
    await r.deliver(envelopeOf({ channel_id: "a", text: "sleep=300" }));
    await r.deliver(envelopeOf({ channel_id: "b" }));
    expect((await r.health()).workers).toBe(2);
    await waitFor(() => (ends(r.agent.records()).length === 2 ? true : undefined), "two runs");
    await waitFor(async () => ((await r.health()).workers === 0 ? true : undefined), "eviction", 3_000);
  });

  test("stop lets a running agent finish within the grace, stops it after, and reports what never ran", async () => {
    const r = receiverUnderTest();
    await r.deliver(envelopeOf({ text: "sleep=10000" }));
    await r.deliver(envelopeOf({ text: "queued behind" }));
    await waitFor(() => (starts(r.agent.records()).length === 1 ? true : undefined), "the first run");
    const t0 = performance.now();
    await r.receiver.stop(300);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(isAlive(starts(r.agent.records())[0]?.pid as number)).toBe(false);
    const warned = r.log.entries.filter((e) => e.level === "warn").map((e) => e.msg);
    expect(warned).toContain("stopped at shutdown; it runs again at the next start");
    expect(warned).toContain("not run before shutdown; it runs at the next start");
    const refused = await r.deliver(envelopeOf());
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: "RECEIVER_BUSY", details: {} } });
  });
});
