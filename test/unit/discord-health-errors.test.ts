/**
 * The Discord connector's health states and its mapping of platform failures, fed with the real
 * error classes discord.js throws (@discordjs/rest and discord.js's own DiscordjsError).
 */
import { describe, expect, test } from "bun:test";
import { DiscordAPIError, DiscordjsError, DiscordjsErrorCodes, HTTPError, RateLimitError } from "discord.js";
import { type LinkState, linkHealth } from "../../src/connectors/community-chat/health.ts";
import {
  FATAL_CLOSE,
  isRefused,
  isTokenRejection,
  loginFailure,
  sendFailure,
} from "../../src/connectors/community-chat/platform-errors.ts";
import { AppError } from "../../src/core/errors.ts";

const T0 = 1_800_000_000_000;
const LIMITS = { loginDeadlineMs: 30_000, silenceMs: 100_000 };
const at = (phase: LinkState["phase"], over: Partial<LinkState> = {}): LinkState => ({
  phase,
  since: T0,
  problem: null,
  lastAckAt: null,
  ...over,
});

describe("health", () => {
  test("starting until ready; degraded once login passes its deadline, with the last problem", () => {
    expect(linkHealth(at("starting"), T0 + 29_000, LIMITS)).toEqual({
      state: "starting",
      detail: "Connecting to Discord.",
    });
    expect(linkHealth(at("starting", { problem: "connect ECONNREFUSED" }), T0 + 31_000, LIMITS)).toEqual({
      state: "degraded",
      detail: "Still connecting to Discord after 31 s (connect ECONNREFUSED); retrying.",
    });
  });

  test("ok while heartbeats are acknowledged; degraded past the silence window and while reconnecting", () => {
    expect(linkHealth(at("ready", { lastAckAt: T0 + 50_000 }), T0 + 60_000, LIMITS)).toEqual({
      state: "ok",
      detail: "Connected to Discord; last heartbeat acknowledged 10 s ago.",
    });
    expect(linkHealth(at("ready"), T0 + 1_000, LIMITS).state).toBe("ok");
    expect(linkHealth(at("ready", { lastAckAt: T0 + 1_000 }), T0 + 102_000, LIMITS)).toEqual({
      state: "degraded",
      detail: "Connected, but Discord has acknowledged no heartbeat for 101 s.",
    });
    expect(linkHealth(at("reconnecting"), T0 + 4_000, LIMITS)).toEqual({
      state: "degraded",
      detail: "Reconnecting to Discord (for 4 s).",
    });
  });

  test("failed is error with what to do", () => {
    expect(linkHealth(at("failed", { problem: FATAL_CLOSE[4014] as string }), T0, LIMITS)).toEqual({
      state: "error",
      detail: FATAL_CLOSE[4014] as string,
    });
    expect(FATAL_CLOSE[4014]).toContain("Message Content intent");
    expect(FATAL_CLOSE[4004]).toContain("Reset Token");
  });
});

const body = { body: undefined, files: undefined };
const apiError = (status: number, code: number, message: string) =>
  new DiscordAPIError({ code, message }, code, status, "POST", "http://x/api/v10/channels/1/messages", body);

describe("send failures", () => {
  const cases: [string, unknown, AppError["code"], Record<string, unknown>][] = [
    ["401", apiError(401, 0, "401: Unauthorized"), "PLATFORM_AUTH", { status: 401 }],
    [
      "403 Missing Permissions",
      apiError(403, 50013, "Missing Permissions"),
      "PLATFORM_AUTH",
      { status: 403, discord_code: 50013 },
    ],
    [
      "403 cannot DM this user",
      apiError(403, 50007, "Cannot send messages to this user"),
      "PLATFORM_AUTH",
      { discord_code: 50007 },
    ],
    [
      "404 Unknown Channel",
      apiError(404, 10003, "Unknown Channel"),
      "PLATFORM_SEND_FAILED",
      { status: 404, discord_code: 10003 },
    ],
    [
      "5xx after retries",
      new HTTPError(503, "Service Unavailable", "POST", "http://x", body),
      "PLATFORM_SEND_FAILED",
      { status: 503 },
    ],
    [
      "a long rate limit",
      new RateLimitError({
        timeToReset: 9000,
        limit: 5,
        method: "POST",
        hash: "h",
        url: "http://x",
        route: "/channels/:id/messages",
        majorParameter: "1",
        global: false,
        retryAfter: 9000,
        sublimitTimeout: 0,
        scope: "user",
      }),
      "PLATFORM_SEND_FAILED",
      { reason: "rate_limited", retry_after_ms: 9000, scope: "user" },
    ],
    [
      "a timeout",
      new DOMException("This operation was aborted", "AbortError"),
      "PLATFORM_SEND_FAILED",
      { outcome: "unknown" },
    ],
    [
      "the token cleared by an earlier 401",
      new Error("Expected token to be set for this request, but none was present"),
      "PLATFORM_AUTH",
      {},
    ],
    [
      "connection refused",
      Object.assign(new TypeError("fetch failed"), { code: "ECONNREFUSED" }),
      "PLATFORM_SEND_FAILED",
      { reason: "fetch failed" },
    ],
  ];
  test.each(cases)("%s", (_what, err, code, details) => {
    const mapped = sendFailure(err);
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped.code).toBe(code);
    expect(mapped.status).toBe(502);
    expect(mapped.details).toMatchObject(details);
    expect(mapped.cause).toBe(err);
  });

  test("only a 401 or a cleared token counts as a rejected token", () => {
    expect(isTokenRejection(apiError(401, 0, "401: Unauthorized"))).toBe(true);
    expect(isTokenRejection(apiError(403, 50013, "Missing Permissions"))).toBe(false);
    expect(isTokenRejection(null)).toBe(false);
  });

  test("a refusal (Discord's 4xx) is told apart from what may pass: 5xx, rate limits, timeouts", () => {
    expect(isRefused(apiError(400, 50035, "Invalid Form Body"))).toBe(true);
    expect(isRefused(apiError(403, 50007, "Cannot send messages to this user"))).toBe(true);
    expect(isRefused(new HTTPError(503, "Service Unavailable", "POST", "http://x", body))).toBe(false);
    const rateLimited = new RateLimitError({
      timeToReset: 9000,
      limit: 5,
      method: "POST",
      hash: "h",
      url: "http://x",
      route: "/users/@me/channels",
      majorParameter: "global",
      global: false,
      retryAfter: 9000,
      sublimitTimeout: 0,
      scope: "user",
    });
    expect(isRefused(rateLimited)).toBe(false);
    expect(isRefused(new DOMException("This operation was aborted", "AbortError"))).toBe(false);
    expect(isRefused(null)).toBe(false);
  });
});

describe("login failures", () => {
  const cases: [string, unknown, object][] = [
    [
      "TokenInvalid (401 on /gateway/bot)",
      // discord.js's own error class (its constructor is private in the typings only)
      new (DiscordjsError as unknown as new (code: string) => Error)(DiscordjsErrorCodes.TokenInvalid),
      { fatal: expect.stringContaining("Reset Token") },
    ],
    ["close 4004", new Error("Authentication failed"), { fatal: expect.stringContaining("Reset Token") }],
    [
      "close 4014",
      new Error("Used disallowed intents"),
      { fatal: expect.stringContaining("Message Content intent") },
    ],
    [
      "close 4011",
      new Error("Sharding is required"),
      { fatal: expect.stringContaining("Sharding is required") },
    ],
    [
      "no gateway (retried)",
      Object.assign(new TypeError("fetch failed"), { code: "ECONNREFUSED" }),
      { retry: "fetch failed" },
    ],
  ];
  test.each(cases)("%s", (_what, err, verdict) => {
    expect(loginFailure(err) as object).toEqual(verdict);
  });
});
