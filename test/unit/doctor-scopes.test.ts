/**
 * gw doctor's two scopes (pure parts): the running service's connectors beside this shell's configuration
 * (connectors.ts), the report's headings and per-check scope (check.ts), the token check's words with a
 * fetcher that answers or throws (token.ts), and `gw doctor --help` naming the levels the output uses.
 */
import { describe, expect, test } from "bun:test";
import { commandHelp } from "../../src/commands/help.ts";
import { type Check, inScope, ok, renderJson, renderText, warn } from "../../src/doctor/check.ts";
import {
  type Configured,
  configuredConnectors,
  connectorChecks,
  contradicted,
} from "../../src/doctor/connectors.ts";
import { bearerTokenCheck } from "../../src/doctor/token.ts";

const AT = "127.0.0.1:8080";
const OFF: Record<string, Configured> = configuredConnectors({
  deviceMessengerOn: false,
  chatDbPath: "/Users/me/Library/Messages/chat.db",
  communityBotToken: null,
});
const ON: Record<string, Configured> = configuredConnectors({
  deviceMessengerOn: true,
  chatDbPath: "/Users/me/Library/Messages/chat.db",
  communityBotToken: "bot-token",
});
const health = (connectors: Record<string, string>, details: Record<string, string> = {}) => ({
  connectors,
  details,
});

describe("the running service's connectors beside this configuration", () => {
  test("both agree: the connector's state, as before", () => {
    expect(connectorChecks(AT, health({ device_messenger: "ok", community_chat: "ok" }), ON)).toEqual([
      ok("serve-device_messenger", "running gw serve: device_messenger is ok"),
      ok("serve-community_chat", "running gw serve: community_chat is ok"),
    ]);
    expect(connectorChecks(AT, health({ device_messenger: "disabled" }), OFF)).toEqual([
      ok("serve-device_messenger", "running gw serve: device_messenger is disabled"),
    ]);
    expect(contradicted({ device_messenger: "ok", community_chat: "disabled" }, ON)).toEqual([]);
  });

  test("it runs what this configuration would not: one line saying so, and the 'off' line it replaces", () => {
    const checks = connectorChecks(AT, health({ device_messenger: "ok", community_chat: "ok" }), OFF);
    expect(checks.map((c) => c.what)).toEqual([
      "the running service on 127.0.0.1:8080 reads iMessage (device_messenger ok); this shell's configuration would not (GW_CHAT_DB_PATH unset): it was started with another configuration",
      "the running service on 127.0.0.1:8080 connects to Discord (community_chat ok); this shell's configuration would not (GW_COMMUNITY_BOT_TOKEN unset): it was started with another configuration",
    ]);
    expect(checks.map((c) => c.level)).toEqual(["ok", "ok"]);
    expect(contradicted({ device_messenger: "ok", community_chat: "starting" }, OFF)).toEqual([
      "imessage",
      "discord",
    ]);
  });

  test("such a connector in trouble keeps its level, why and fix", () => {
    const [c] = connectorChecks(
      AT,
      health({ community_chat: "error" }, { community_chat: "Discord rejected the token" }),
      OFF,
    );
    expect(c).toEqual({
      id: "serve-community_chat",
      level: "fail",
      what: expect.stringContaining(
        "connects to Discord (community_chat error); this shell's configuration would not",
      ),
      why: "Discord rejected the token",
      fix: "fix that, then restart gw serve",
    });
  });

  test("the reverse: this configuration would run it, the running service does not (warn)", () => {
    const checks = connectorChecks(
      AT,
      health({ device_messenger: "disabled", community_chat: "disabled" }),
      ON,
    );
    expect(checks).toEqual([
      warn(
        "serve-device_messenger",
        "the running service on 127.0.0.1:8080 does not read iMessage (device_messenger disabled); this shell's configuration would (chat.db at /Users/me/Library/Messages/chat.db): it was started with another configuration",
        "no iMessage reaches agents through it",
        "stop that service and start `gw serve` from this shell, or give the service that runs it the same setting and restart it",
      ),
      warn(
        "serve-community_chat",
        "the running service on 127.0.0.1:8080 does not connect to Discord (community_chat disabled); this shell's configuration would (GW_COMMUNITY_BOT_TOKEN set): it was started with another configuration",
        "no Discord message reaches agents through it",
        "stop that service and start `gw serve` from this shell, or give the service that runs it the same setting and restart it",
      ),
    ]);
    expect(contradicted({ device_messenger: "disabled", community_chat: "disabled" }, ON)).toEqual([]);
  });

  test("a connector this version does not know: its state only", () => {
    expect(connectorChecks(AT, health({ fax: "degraded" }, { fax: "retrying" }), OFF)).toEqual([
      warn(
        "serve-fax",
        "running gw serve: fax is degraded",
        "retrying",
        "wait a moment and run gw doctor again",
      ),
    ]);
  });
});

describe("the report", () => {
  const checks: Check[] = [
    ...inScope("config", [ok("config", "configuration parses")]),
    ...inScope("running", [warn("serve", "gw serve is not running on 127.0.0.1:8080", "why", "fix")]),
  ];
  test("text: each scope under its heading, a blank line between", () => {
    expect(renderText(checks, { config: "this shell:", running: "the running service:" })).toBe(
      "this shell:\nok: configuration parses\n\nthe running service:\nwarn: gw serve is not running on 127.0.0.1:8080 — why — fix\n",
    );
  });
  test("a scope without checks has no heading", () => {
    expect(renderText(checks.slice(0, 1), { config: "this shell:", running: "the running service:" })).toBe(
      "this shell:\nok: configuration parses\n",
    );
  });
  test("json: every check carries its scope, after its id", () => {
    const report = JSON.parse(renderJson(checks)) as { ok: boolean; checks: Check[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => Object.keys(c).slice(0, 2))).toEqual([
      ["id", "scope"],
      ["id", "scope"],
    ]);
    expect(report.checks.map((c) => c.scope)).toEqual(["config", "running"]);
  });
});

describe("the token check", () => {
  const TOKEN = "secret-token-should-never-show-1234";
  const probe = {
    healthUrl: "http://127.0.0.1:8080/healthz",
    at: AT,
    token: TOKEN,
    envFilePath: "/home/me/.config/gw/env",
    timeoutMs: 1000,
  };
  const answering = (status: number, seen: Request[] = []) =>
    (async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(new Request(input as string, init));
      return new Response("{}", { status });
    }) as typeof fetch;

  test("one GET /channels?limit=1 as agent gw-doctor with the bearer; 200 is ok", async () => {
    const seen: Request[] = [];
    expect(await bearerTokenCheck(probe, answering(200, seen))).toEqual(
      ok("bearer-token", "GW_BEARER_TOKEN is accepted by the running service on 127.0.0.1:8080"),
    );
    expect(
      seen.map((r) => [r.method, r.url, r.headers.get("x-agent-id"), r.headers.get("authorization")]),
    ).toEqual([["GET", "http://127.0.0.1:8080/channels?limit=1", "gw-doctor", `Bearer ${TOKEN}`]]);
  });

  test("401 fails with the fix; other answers and errors warn; the token is never in a line", async () => {
    const rejected = await bearerTokenCheck(probe, answering(401));
    expect(rejected).toMatchObject({
      level: "fail",
      why: "agents get 401: it was started with another token",
      fix: "use the token gw serve was started with: GW_BEARER_TOKEN in /home/me/.config/gw/env when the login service runs it (gw service install), or the one gw demo's banner prints",
    });
    expect((await bearerTokenCheck(probe, answering(503))).level).toBe("warn");
    const thrown = await bearerTokenCheck(probe, (async () => {
      throw new Error(`invalid header value: Bearer ${TOKEN}`);
    }) as unknown as typeof fetch);
    expect(thrown.level).toBe("warn");
    expect(thrown.what).toContain("invalid header value: Bearer …");
    for (const c of [rejected, thrown]) expect(JSON.stringify(c)).not.toContain(TOKEN);
  });
});

test("`gw doctor --help` names the levels the output uses: ok, warn, fail", () => {
  const help = commandHelp("doctor");
  expect(help).not.toContain("FIX");
  expect(help).toContain("`level: what — why — how to fix`");
  for (const level of ["ok", "warn", "fail"]) expect(help).toMatch(new RegExp(`^  ${level} +\\S`, "m"));
  expect(help).toContain("scope (config or running)");
});
