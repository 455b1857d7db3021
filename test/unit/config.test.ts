import { describe, expect, test } from "bun:test";
import { formatProblems, loadConfig, secretValues } from "../../src/config/load.ts";
import type { HostInfo } from "../../src/config/paths.ts";
import { SETTINGS } from "../../src/config/settings.ts";

const linux: HostInfo = { platform: "linux", homeDir: "/home/ann", cwd: "/work" };
const mac: HostInfo = { platform: "darwin", homeDir: "/Users/ann", cwd: "/work" };
const TOKEN = { GW_BEARER_TOKEN: "tok" };

function ok(env: Record<string, string>, host = linux) {
  const r = loadConfig(env, host);
  if (!r.ok) throw new Error(formatProblems(r.problems));
  return r.config;
}

function problems(env: Record<string, string>) {
  const r = loadConfig({ ...TOKEN, ...env }, linux);
  if (r.ok) throw new Error("expected a configuration error");
  return r.problems;
}

describe("defaults", () => {
  test("every variable has the documented default on Linux", () => {
    expect(ok(TOKEN)).toEqual({
      bearerToken: "tok",
      bindHost: "127.0.0.1",
      bindPort: 8080,
      dbPath: "/home/ann/.local/share/gw/gw.db",
      attachmentDir: "/home/ann/.local/share/gw/attachments",
      logDir: "/home/ann/.local/state/gw/logs",
      logLevel: "info",
      logStderrLevel: "trace",
      allowlistPath: "/home/ann/.config/gw/allowlist.toml",
      webhookUrl: null,
      webhookSecret: null,
      webhookRetryDelaysMs: [5000, 30000, 120000, 600000],
      webhookTimeoutMs: 15000,
      webhookEvents: ["message"],
      communityBotToken: null,
      communityApiUrl: "https://discord.com/api",
      communityCatchupMaxMessages: 200,
      communityCatchupMaxAgeHours: 24,
      communityQueueMax: 1000,
      communityLoginTimeoutMs: 30000,
      deviceMessengerOn: false,
      chatDbPath: "/home/ann/Library/Messages/chat.db",
      devicePollIntervalMs: 1000,
      deviceBackfillFenceMinutes: 15,
      deviceAttachmentWaitMs: 60000,
      deviceTrustedServices: ["iMessage"],
      osascriptPath: "/usr/bin/osascript",
      contacts: null,
      contactsDir: "/home/ann/Library/Application Support/AddressBook",
      defaultRegion: null,
      contactsOn: false,
      attachmentRetentionDays: 30,
      attachmentMaxBytes: 104857600,
      rateLimitPerChannelRps: 1,
      rateLimitBurst: 5,
      idempotencyTtlHours: 24,
      sendPathRoots: null,
      agentId: null,
      baseUrl: "http://127.0.0.1:8080",
      receiverBindHost: "127.0.0.1",
      receiverBindPort: 8090,
      receiverAgentBin: "claude",
      receiverAgentArgs: null,
      receiverAgentPromptFile: "/home/ann/.config/gw/receiver-prompt.md",
      receiverAgentTimeoutSeconds: 300,
      receiverIdleWorkerTtlSeconds: 300,
      mcpChannel: false,
      mcpExtended: false,
      mcpOwner: null,
      mcpApprovalExpiryS: 600,
      sipsPath: "/usr/bin/sips",
      receiverDangerous: false,
      receiverAgentEnv: null,
      receiverSeenCapacity: 10000,
      receiverDbPath: "/home/ann/.local/share/gw/receiver.db",
      receiverQueueMax: 1000,
      receiverAckEmoji: null,
      receiverBatchMs: 0,
      receiverCommands: false,
      serviceManager: "systemd",
    });
  });

  test("macOS locations and XDG overrides", () => {
    const m = ok(TOKEN, mac);
    expect(m.dbPath).toBe("/Users/ann/Library/Application Support/gw/gw.db");
    expect(m.logDir).toBe("/Users/ann/Library/Logs/gw");
    expect(m.chatDbPath).toBe("/Users/ann/Library/Messages/chat.db");
    expect(m.serviceManager).toBe("launchd");
    const x = ok({ ...TOKEN, XDG_CONFIG_HOME: "/cfg", XDG_DATA_HOME: "/data" });
    expect(x.allowlistPath).toBe("/cfg/gw/allowlist.toml");
    expect(x.dbPath).toBe("/data/gw/gw.db");
  });

  test("the test covers every setting in the table (and the derived values)", () => {
    expect(Object.keys(ok(TOKEN)).sort()).toEqual(
      [...Object.keys(SETTINGS), "deviceMessengerOn", "contactsOn"].sort(),
    );
  });

  test("iMessage is read on macOS, or wherever GW_CHAT_DB_PATH is set (an empty value is unset)", () => {
    expect(ok(TOKEN).deviceMessengerOn).toBe(false);
    expect(ok({ ...TOKEN, GW_CHAT_DB_PATH: "/x/chat.db" }).deviceMessengerOn).toBe(true);
    expect(ok({ ...TOKEN, GW_CHAT_DB_PATH: "" }).deviceMessengerOn).toBe(false);
    const mac = loadConfig(TOKEN, { platform: "darwin", homeDir: "/Users/ann", cwd: "/" });
    expect(mac.ok && mac.config.deviceMessengerOn).toBe(true);
  });

  test("Contacts are read on macOS or wherever GW_CONTACTS_DIR is set, unless GW_CONTACTS=0", () => {
    expect(ok(TOKEN).contactsOn).toBe(false);
    expect(ok(TOKEN, mac).contactsOn).toBe(true);
    expect(ok(TOKEN, mac).contactsDir).toBe("/Users/ann/Library/Application Support/AddressBook");
    const set = ok({ ...TOKEN, GW_CONTACTS_DIR: "~/ab" });
    expect([set.contactsOn, set.contactsDir]).toEqual([true, "/home/ann/ab"]);
    expect(ok({ ...TOKEN, GW_CONTACTS_DIR: "" }).contactsOn).toBe(false);
    expect(ok({ ...TOKEN, GW_CONTACTS: "0" }, mac).contactsOn).toBe(false);
    expect(ok({ ...TOKEN, GW_CONTACTS: "0", GW_CONTACTS_DIR: "/ab" }).contactsOn).toBe(false);
    expect(ok({ ...TOKEN, GW_CONTACTS: "1" }).contactsOn).toBe(true);
  });
});

describe("values", () => {
  test("parses set values of each kind", () => {
    const c = ok({
      ...TOKEN,
      GW_BIND_PORT: "9000",
      GW_DB_PATH: "~/x/gw.db",
      GW_LOG_DIR: "rel/logs",
      GW_RATE_LIMIT_PER_CHANNEL_RPS: "0.5",
      GW_ATTACHMENT_RETENTION_DAYS: "0.0001",
      GW_WEBHOOK_URL: "http://127.0.0.1:8090/webhook/",
      GW_WEBHOOK_SECRET: "s3cret",
      GW_WEBHOOK_RETRY_DELAYS_MS: "50, 100,200,400",
      GW_SEND_PATH_ROOTS: "/a:/b/c",
      GW_RECEIVER_DANGEROUS: "1",
      GW_LOG_LEVEL: "DEBUG",
      GW_DEFAULT_REGION: " gb ",
    });
    expect(c.bindPort).toBe(9000);
    expect(c.dbPath).toBe("/home/ann/x/gw.db");
    expect(c.logDir).toBe("/work/rel/logs");
    expect(c.rateLimitPerChannelRps).toBe(0.5);
    expect(c.attachmentRetentionDays).toBe(0.0001);
    expect(c.webhookUrl).toBe("http://127.0.0.1:8090/webhook");
    expect(c.webhookRetryDelaysMs).toEqual([50, 100, 200, 400]);
    expect(c.sendPathRoots).toEqual(["/a", "/b/c"]);
    expect(c.receiverDangerous).toBe(true);
    expect(c.logLevel).toBe("debug");
    expect(c.defaultRegion).toBe("GB");
  });

  test("an empty value counts as unset", () => {
    expect(ok({ ...TOKEN, GW_BIND_PORT: "", GW_WEBHOOK_URL: "" })).toMatchObject({
      bindPort: 8080,
      webhookUrl: null,
    });
  });

  test("variables with another prefix are ignored, with no alias", () => {
    const c = ok({ ...TOKEN, BIND_PORT: "1", GATEWAY_BIND_PORT: "2", gw_bind_port: "3", PORT: "4" });
    expect(c.bindPort).toBe(8080);
  });

  test("an unknown GW_ variable is a warning that suggests the near name", () => {
    const r = loadConfig({ ...TOKEN, GW_BIND_PROT: "1" }, linux);
    expect(r.ok).toBe(true);
    expect(r.warnings).toEqual([
      "GW_BIND_PROT is not a gw setting and is ignored (did you mean GW_BIND_PORT?)",
    ]);
  });
});

describe("configuration errors name the variable and the fix", () => {
  test("missing and empty bearer token", () => {
    for (const env of [{}, { GW_BEARER_TOKEN: "" }]) {
      const r = loadConfig(env, linux);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.problems.map((p) => p.variable)).toEqual(["GW_BEARER_TOKEN"]);
        expect(formatProblems(r.problems)).toContain("Fix: set it");
      }
    }
  });

  test.each([
    ["GW_BIND_PORT", "abc", "not a port number"],
    ["GW_BIND_PORT", "70000", "not a port number"],
    ["GW_BIND_PORT", "80.5", "not a port number"],
    ["GW_RECEIVER_BIND_PORT", "-1", "not a port number"],
    ["GW_RATE_LIMIT_PER_CHANNEL_RPS", "-1", "greater than zero"],
    ["GW_RATE_LIMIT_PER_CHANNEL_RPS", "0", "greater than zero"],
    ["GW_RATE_LIMIT_PER_CHANNEL_RPS", "fast", "not a number"],
    ["GW_ATTACHMENT_RETENTION_DAYS", "1e999", "not a number"],
    ["GW_IDEMPOTENCY_TTL_HOURS", "NaN", "not a number"],
    ["GW_RATE_LIMIT_BURST", "0", "out of range"],
    ["GW_RATE_LIMIT_BURST", "2.5", "not a whole number"],
    ["GW_WEBHOOK_TIMEOUT_MS", "15s", "not a whole number"],
    ["GW_ATTACHMENT_MAX_BYTES", "-5", "out of range"],
    ["GW_WEBHOOK_RETRY_DELAYS_MS", "1,2,3", "has 3 values, not 4"],
    ["GW_WEBHOOK_RETRY_DELAYS_MS", "1,2,x,4", "not a whole number"],
    ["GW_WEBHOOK_URL", "not a url", "is not a URL"],
    ["GW_WEBHOOK_URL", "ftp://host/x", "not an http(s) URL"],
    ["GW_BASE_URL", "localhost:8080", "not an http(s) URL"],
    ["GW_SEND_PATH_ROOTS", "/ok:relative/dir", "relative or empty entry"],
    ["GW_RECEIVER_DANGEROUS", "yes", "not 0 or 1"],
    ["GW_LOG_LEVEL", "loud", "not an accepted value"],
    ["GW_BIND_HOST", "local host", "not a host name"],
    ["GW_DEVICE_POLL_INTERVAL_MS", "5", "out of range"],
    ["GW_CONTACTS", "yes", "not 0 or 1"],
    ["GW_DEFAULT_REGION", "USA", "not a two-letter region code"],
    ["GW_DEFAULT_REGION", "ZZ", "not a region with a telephone numbering plan"],
  ])("%s=%p", (variable, value, phrase) => {
    const extra: Record<string, string> = variable === "GW_WEBHOOK_URL" ? { GW_WEBHOOK_SECRET: "s" } : {};
    const found = problems({ [variable]: value, ...extra });
    expect(found).toHaveLength(1);
    expect(found[0]?.variable).toBe(variable);
    expect(found[0]?.problem).toContain(phrase);
    expect(found[0]?.fix.length).toBeGreaterThan(5);
    expect(formatProblems(found)).toStartWith(`configuration error: ${variable}=${JSON.stringify(value)}`);
  });

  test("every problem is reported at once, not only the first", () => {
    const found = problems({ GW_BIND_PORT: "x", GW_RATE_LIMIT_BURST: "y", GW_LOG_LEVEL: "z" });
    expect(found.map((p) => p.variable).sort()).toEqual([
      "GW_BIND_PORT",
      "GW_LOG_LEVEL",
      "GW_RATE_LIMIT_BURST",
    ]);
  });

  test("a webhook URL without a secret is refused (webhooks are always signed)", () => {
    const found = problems({ GW_WEBHOOK_URL: "http://127.0.0.1:9/x" });
    expect(found.map((p) => p.variable)).toEqual(["GW_WEBHOOK_SECRET"]);
  });
});

test("secretValues lists the configured secrets", () => {
  const c = ok({
    ...TOKEN,
    GW_WEBHOOK_URL: "http://h/x",
    GW_WEBHOOK_SECRET: "whsec",
    GW_COMMUNITY_BOT_TOKEN: "bot",
  });
  expect(secretValues(c).sort()).toEqual(["bot", "tok", "whsec"]);
});

describe("GW_WEBHOOK_EVENTS", () => {
  test("a comma list of message and event kinds, or all; an unknown word or an empty list is refused", () => {
    expect(ok({ ...TOKEN, GW_WEBHOOK_EVENTS: "message, reaction.added,message" }).webhookEvents).toEqual([
      "message",
      "reaction.added",
    ]);
    expect(ok({ ...TOKEN, GW_WEBHOOK_EVENTS: "ALL" }).webhookEvents).toEqual([
      "message",
      "message.edited",
      "message.deleted",
      "reaction.added",
      "reaction.removed",
    ]);
    expect(problems({ GW_WEBHOOK_EVENTS: "reaction.add" })[0]).toMatchObject({
      variable: "GW_WEBHOOK_EVENTS",
      problem: expect.stringContaining("reaction.add"),
    });
    expect(problems({ GW_WEBHOOK_EVENTS: " , " })[0]?.variable).toBe("GW_WEBHOOK_EVENTS");
  });
});

describe("GW_DEVICE_TRUSTED_SERVICES and GW_COMMUNITY_QUEUE_MAX", () => {
  test("services: a comma list of iMessage, SMS, RCS in any case, spelled back canonically; anything else refused", () => {
    expect(ok({ ...TOKEN, GW_DEVICE_TRUSTED_SERVICES: "imessage, sms,SMS" }).deviceTrustedServices).toEqual([
      "iMessage",
      "SMS",
    ]);
    expect(ok({ ...TOKEN, GW_DEVICE_TRUSTED_SERVICES: "RCS" }).deviceTrustedServices).toEqual(["RCS"]);
    for (const bad of ["iMessageLite", "all", "iMessage,whatsapp", " , "]) {
      expect(problems({ GW_DEVICE_TRUSTED_SERVICES: bad })[0]).toMatchObject({
        variable: "GW_DEVICE_TRUSTED_SERVICES",
        fix: expect.stringContaining("iMessage, SMS, RCS"),
      });
    }
  });
  test("the queue bound is a whole number of at least 1", () => {
    expect(ok({ ...TOKEN, GW_COMMUNITY_QUEUE_MAX: "50" }).communityQueueMax).toBe(50);
    expect(problems({ GW_COMMUNITY_QUEUE_MAX: "0" })[0]?.variable).toBe("GW_COMMUNITY_QUEUE_MAX");
    expect(problems({ GW_COMMUNITY_QUEUE_MAX: "1.5" })[0]?.variable).toBe("GW_COMMUNITY_QUEUE_MAX");
  });
});

describe("GW_RECEIVER_AGENT_ARGS", () => {
  test("a JSON array of strings, taken verbatim (spaces, quotes, $ and empty strings kept); [] is no arguments", () => {
    expect(ok({ ...TOKEN, GW_RECEIVER_AGENT_ARGS: '["run", "--quiet"]' }).receiverAgentArgs).toEqual([
      "run",
      "--quiet",
    ]);
    expect(ok({ ...TOKEN, GW_RECEIVER_AGENT_ARGS: " [ ] " }).receiverAgentArgs).toEqual([]);
    expect(
      ok({ ...TOKEN, GW_RECEIVER_AGENT_ARGS: '["-c", "exec a \\"$GW_PROMPT_FILE\\"", "", "two words"]' })
        .receiverAgentArgs,
    ).toEqual(["-c", 'exec a "$GW_PROMPT_FILE"', "", "two words"]);
  });
  test("unset or empty: null, Claude Code's flags", () => {
    expect(ok({ ...TOKEN, GW_RECEIVER_AGENT_ARGS: "" }).receiverAgentArgs).toBeNull();
  });
  test.each([
    ["run --quiet", "is not JSON"],
    ["['run']", "is not JSON"],
    ['["run",]', "is not JSON"],
    ['"run"', "is not a JSON array"],
    ['{"args": ["run"]}', "is not a JSON array"],
    ["null", "is not a JSON array"],
    ["3", "is not a JSON array"],
    ['["run", 3]', "not a string (at 1: 3)"],
    ['["run", null]', "not a string (at 1: null)"],
    ['[["nested"]]', "not a string (at 0"],
    ['["a\\u0000b"]', "NUL byte"],
  ])("%s is refused: %s", (raw, phrase) => {
    const found = problems({ GW_RECEIVER_AGENT_ARGS: raw });
    expect(found).toHaveLength(1);
    expect(found[0]?.variable).toBe("GW_RECEIVER_AGENT_ARGS");
    expect(found[0]?.problem).toContain(phrase);
    expect(found[0]?.fix).toContain('["run", "--quiet"]');
    expect(formatProblems(found)).toStartWith(
      `configuration error: GW_RECEIVER_AGENT_ARGS=${JSON.stringify(raw)}`,
    );
  });
});

describe("GW_RECEIVER_ACK_EMOJI, GW_RECEIVER_BATCH_MS and GW_RECEIVER_COMMANDS", () => {
  test("the emoji: one Unicode emoji or Discord's <:name:id> / <a:name:id>, trimmed; anything else refused", () => {
    for (const emoji of ["👀", "✅", "👍🏽", "🏳️‍🌈", "<:party_blob:1300000000000000001>", "<a:dance:12>"])
      expect(ok({ ...TOKEN, GW_RECEIVER_ACK_EMOJI: ` ${emoji} ` }).receiverAckEmoji).toBe(emoji);
    for (const bad of ["eyes", ":eyes:", "👀👀", "<:x:1>", "<:name:id>", `<:${"n".repeat(40)}:1>`, "a👀"])
      expect(problems({ GW_RECEIVER_ACK_EMOJI: bad })[0]).toMatchObject({
        variable: "GW_RECEIVER_ACK_EMOJI",
        problem: expect.stringContaining("is not one emoji"),
        fix: expect.stringContaining("<:name:id>"),
      });
    expect(problems({ GW_RECEIVER_ACK_EMOJI: "👀".repeat(40) })[0]).toMatchObject({
      variable: "GW_RECEIVER_ACK_EMOJI",
      problem: expect.stringContaining("is longer than 64 characters"),
    });
  });

  test("the batch window: whole milliseconds from 0 to 60000", () => {
    expect(ok({ ...TOKEN, GW_RECEIVER_BATCH_MS: "0" }).receiverBatchMs).toBe(0);
    expect(ok({ ...TOKEN, GW_RECEIVER_BATCH_MS: " 1500 " }).receiverBatchMs).toBe(1500);
    expect(ok({ ...TOKEN, GW_RECEIVER_BATCH_MS: "60000" }).receiverBatchMs).toBe(60_000);
    for (const [bad, problem] of [
      ["-1", "out of range"],
      ["60001", "out of range"],
      ["1.5", "not a whole number"],
      ["2s", "not a whole number"],
    ] as const)
      expect(problems({ GW_RECEIVER_BATCH_MS: bad })[0]).toMatchObject({
        variable: "GW_RECEIVER_BATCH_MS",
        problem: expect.stringContaining(problem),
        fix: "use a whole number from 0 to 60000",
      });
  });

  test("the commands flag: 0 or 1", () => {
    expect(ok({ ...TOKEN, GW_RECEIVER_COMMANDS: "1" }).receiverCommands).toBe(true);
    expect(ok({ ...TOKEN, GW_RECEIVER_COMMANDS: "0" }).receiverCommands).toBe(false);
    expect(problems({ GW_RECEIVER_COMMANDS: "on" })[0]).toMatchObject({
      variable: "GW_RECEIVER_COMMANDS",
      problem: expect.stringContaining("is not 0 or 1"),
    });
  });
});

test("a client's missing token (gw mcp, gw receiver) asks for the service's token, never a new one", () => {
  const r = loadConfig({}, linux, ["bearerToken"], true);
  if (r.ok) throw new Error("expected a configuration error");
  const [problem] = r.problems;
  expect(problem?.variable).toBe("GW_BEARER_TOKEN");
  const fix = String(problem?.fix);
  expect(fix).toContain("the token gw serve runs with");
  expect(fix).not.toContain("openssl rand");
});
