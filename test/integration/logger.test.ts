import { expect, test } from "bun:test";
import { readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { createLogger, currentLogFile } from "../../src/log/logger.ts";
import { tempDir } from "../helpers/temp.ts";

test("logs JSON lines to the day's file (0600, dir 0700) and stderr, with secrets redacted by key and by value", async () => {
  const dir = join(tempDir(), "logs");
  let stderr = "";
  const log = await createLogger({
    dir,
    level: "info",
    secrets: ["bearer-canary-123456"],
    stderr: {
      write: (s: string) => {
        stderr += s;
      },
    },
  });
  log.info({ headers: { authorization: "Bearer x" }, note: "token is bearer-canary-123456" }, "request");
  log.debug({ text: "private message" }, "below the level");
  const path = currentLogFile(dir) as string;
  const now = new Date();
  const day = [now.getFullYear(), now.getMonth() + 1, now.getDate()]
    .map((n) => String(n).padStart(2, "0"))
    .join("-");
  expect(path).toBe(join(dir, `gw.${day}.1.log`));
  expect(readlinkSync(join(dir, "current.log"))).toBe(`gw.${day}.1.log`);
  const file = readFileSync(path, "utf8");
  for (const out of [file, stderr]) {
    const line = JSON.parse(out.trim().split("\n")[0] as string);
    expect(line).toMatchObject({
      level: 30,
      msg: "request",
      headers: { authorization: "[redacted]" },
      note: "token is [redacted]",
    });
    expect(out).not.toContain("bearer-canary-123456");
    expect(out).not.toContain("private message");
  }
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
});

test("a terminal gets a short human line instead of JSON", async () => {
  let stderr = "";
  const log = await createLogger({
    dir: null,
    level: "info",
    secrets: [],
    stderr: {
      isTTY: true,
      write: (s: string) => {
        stderr += s;
      },
    },
  });
  log.warn({ path: "/x" }, "allowlist file not found");
  expect(stderr).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} WARN allowlist file not found {"path":"\/x"}\n$/);
});
