/**
 * The service's env file: strict parsing with line numbers, a new file (0600 in a 0700 dir, a random
 * 64-hex-character token, a comment header), never overwritten, and its values checked as gw's
 * configuration with the file named in every error.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HostInfo } from "../../src/config/paths.ts";
import { envFileConfig } from "../../src/service-manager/env-config.ts";
import { initialEnvVars, parseEnvFile, renderEnvFile } from "../../src/service-manager/env-file.ts";
import { createEnvFile, newBearerToken, readEnvFile } from "../../src/service-manager/env-file-store.ts";
import { ServiceError } from "../../src/service-manager/errors.ts";
import { tempDir } from "../helpers/temp.ts";

const host: HostInfo = { platform: "darwin", homeDir: "/Users/ann", cwd: "/" };

describe("parsing", () => {
  test("KEY=value lines; comments and blank lines skipped; the value is everything after the first =", () => {
    const r = parseEnvFile(
      [
        "# a comment",
        "   # an indented comment",
        "",
        "   ",
        "GW_BEARER_TOKEN=abc",
        "GW_WEBHOOK_URL=http://127.0.0.1:8090/webhook?a=1&b=<2>",
        "GW_X=a # not a comment",
        "GW_EMPTY=",
        "lower_case_9=inner  spaces\tand tab",
        "GW_DOLLAR=$HOME;`x`",
      ].join("\n"),
    );
    expect(r).toEqual({
      ok: true,
      vars: [
        ["GW_BEARER_TOKEN", "abc"],
        ["GW_WEBHOOK_URL", "http://127.0.0.1:8090/webhook?a=1&b=<2>"],
        ["GW_X", "a # not a comment"],
        ["GW_EMPTY", ""],
        ["lower_case_9", "inner  spaces\tand tab"],
        ["GW_DOLLAR", "$HOME;`x`"],
      ],
    });
  });

  test("every bad line is reported with its number", () => {
    const r = parseEnvFile(
      [
        "GW_BEARER_TOKEN=abc", // 1
        "just words", // 2
        "export GW_A=1", // 3
        "GW_B =1", // 4
        " GW_C=1", // 5
        "9LIVES=1", // 6
        'GW_D="quoted"', // 7
        "GW_E='quoted'", // 8
        "GW_F=trailing ", // 9
        "GW_G= leading", // 10
        "GW_H=back\\slash", // 11
        "GW_I=windows\r", // 12
        "GW_BEARER_TOKEN=again", // 13
        "# a comment that hides the next line \\", // 14
        "GW-J=1", // 15
      ].join("\n"),
    );
    if (r.ok) throw new Error("expected problems");
    expect(r.problems.map((p) => p.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    const at = (line: number) => r.problems.find((p) => p.line === line)?.problem ?? "";
    expect(at(2)).toContain("is not KEY=value");
    expect(at(3)).toContain("export");
    expect(at(6)).toContain('"9LIVES" is not a variable name');
    expect(at(7)).toContain("GW_D starts with a quote");
    expect(at(9)).toContain("space or tab");
    expect(at(11)).toContain("backslash");
    expect(at(12)).toContain("control character");
    expect(at(13)).toContain("GW_BEARER_TOKEN is already set on line 1");
    expect(at(14)).toContain("hides the next line");
  });

  test("a new file's text parses back to its variables, and its header is all comments", () => {
    const vars = initialEnvVars("f".repeat(64), {
      XDG_CONFIG_HOME: "/cfg",
      XDG_DATA_HOME: "relative/ignored",
    });
    expect(vars).toEqual([
      ["GW_BEARER_TOKEN", "f".repeat(64)],
      ["XDG_CONFIG_HOME", "/cfg"],
    ]);
    const text = renderEnvFile(vars);
    expect(parseEnvFile(text)).toEqual({ ok: true, vars });
    const header = text.split("\n").filter((l) => !l.includes("="));
    expect(header.every((l) => l === "" || l.startsWith("#"))).toBe(true);
    expect(text).toContain("GW_BEARER_TOKEN is the token every HTTP client");
  });
});

describe("the file on disk", () => {
  test("created 0600 in a 0700 dir; never overwritten; read back with its mode", () => {
    const dir = join(tempDir(), "config/gw");
    const path = join(dir, "env");
    const token = newBearerToken();
    createEnvFile(path, [["GW_BEARER_TOKEN", token]]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const before = readFileSync(path, "utf8");
    expect(() => createEnvFile(path, [["GW_BEARER_TOKEN", "other"]])).toThrow(ServiceError);
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(readEnvFile(path)).toEqual({ vars: [["GW_BEARER_TOKEN", token]], mode: 0o600 });
  });

  test("the token is 32 random bytes in hex", () => {
    const a = newBearerToken();
    const b = newBearerToken();
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
  });

  test("a missing file reads as null; a malformed one is a configuration error naming file:line", () => {
    const dir = tempDir();
    expect(readEnvFile(join(dir, "absent"))).toBeNull();
    const path = join(dir, "env");
    writeFileSync(path, "# ok\nGW_BEARER_TOKEN=abc\nGW_BIND_PORT = 9\n");
    chmodSync(path, 0o600);
    let err: unknown;
    try {
      readEnvFile(path);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).configuration).toBe(true);
    expect((err as ServiceError).message).toContain(`${path}:3: has a space`);
    expect(existsSync(path)).toBe(true);
  });
});

describe("checked as gw's configuration", () => {
  test("values parse as settings; the log dir follows the file", () => {
    const { config, warnings } = envFileConfig(
      [
        ["GW_BEARER_TOKEN", "abc"],
        ["GW_BIND_PORT", "8181"],
        ["GW_LOG_DIR", "/var/log/gw"],
      ],
      host,
      "/Users/ann/.config/gw/env",
      ["bearerToken"],
    );
    expect(config.bindPort).toBe(8181);
    expect(config.logDir).toBe("/var/log/gw");
    expect(warnings).toEqual([]);
  });

  test("a missing token and a bad value are configuration errors naming the file and the variable", () => {
    let err: unknown;
    try {
      envFileConfig([["GW_BIND_PORT", "eighty"]], host, "/Users/ann/.config/gw/env", ["bearerToken"]);
    } catch (e) {
      err = e;
    }
    const msg = (err as ServiceError).message;
    expect((err as ServiceError).configuration).toBe(true);
    expect(msg).toContain(
      "/Users/ann/.config/gw/env: GW_BEARER_TOKEN is not set. Fix: add a line GW_BEARER_TOKEN=",
    );
    expect(msg).toContain('/Users/ann/.config/gw/env: GW_BIND_PORT "eighty" is not a port number');
  });

  test("an unknown GW_ name is a warning naming the file", () => {
    const { warnings } = envFileConfig(
      [
        ["GW_BEARER_TOKEN", "abc"],
        ["GW_BIND_PROT", "1"],
      ],
      host,
      "/f/env",
      ["bearerToken"],
    );
    expect(warnings).toEqual([
      "/f/env: GW_BIND_PROT is not a gw setting and is ignored (did you mean GW_BIND_PORT?)",
    ]);
  });
});
