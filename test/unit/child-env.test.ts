/** The one environment policy for child programs (core/child-env.ts): an allowlist, never a secret. */
import { expect, test } from "bun:test";
import { OSASCRIPT_ENV } from "../../src/connectors/registry.ts";
import { CHILD_ENV_NAMES, childEnv } from "../../src/core/child-env.ts";

const parent = {
  PATH: "/usr/bin:/bin",
  HOME: "/Users/ann",
  LANG: "en_US.UTF-8",
  TMPDIR: "/tmp/x",
  GW_BEARER_TOKEN: "secret-1",
  GW_WEBHOOK_SECRET: "secret-2",
  GW_COMMUNITY_BOT_TOKEN: "secret-3",
  GW_STANDIN_CHAT_DB: "/tmp/chat.db",
  GW_STANDIN_LOG: "/tmp/log",
  __CF_USER_TEXT_ENCODING: "0x1F5:0x0:0x0",
  ANTHROPIC_API_KEY: "key",
  NODE_OPTIONS: "--inspect",
  UNSET: undefined,
};

test("only the allowlist passes: no secret, nothing unnamed", () => {
  expect(childEnv(parent)).toEqual({
    PATH: "/usr/bin:/bin",
    HOME: "/Users/ann",
    LANG: "en_US.UTF-8",
    TMPDIR: "/tmp/x",
  });
  expect(CHILD_ENV_NAMES).not.toContain("GW_BEARER_TOKEN");
});

test("osascript also gets CoreFoundation's encoding and the Messages stand-in's settings, still no secret", () => {
  const env = childEnv(parent, OSASCRIPT_ENV);
  expect(Object.keys(env).sort()).toEqual(
    [
      "GW_STANDIN_CHAT_DB",
      "GW_STANDIN_LOG",
      "HOME",
      "LANG",
      "PATH",
      "TMPDIR",
      "__CF_USER_TEXT_ENCODING",
    ].sort(),
  );
  for (const v of Object.values(env)) expect(v).not.toStartWith("secret");
});

test("named extras pass when set; a bare * matches nothing", () => {
  expect(childEnv(parent, ["ANTHROPIC_API_KEY", "MISSING", "*"])).toEqual({
    PATH: "/usr/bin:/bin",
    HOME: "/Users/ann",
    LANG: "en_US.UTF-8",
    TMPDIR: "/tmp/x",
    ANTHROPIC_API_KEY: "key",
  });
});
