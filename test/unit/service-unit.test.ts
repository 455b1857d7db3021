/**
 * The systemd user unit, read back into sections and keys and its ExecStart= split by the rules of
 * systemd.syntax(7)/systemd.service(5) (quotes, backslash escapes, then `%` specifiers, then `$`
 * substitution), compared field by field; hostile program paths survive exactly; and, where
 * systemd-analyze is installed, systemd itself accepts the unit and finds the program at a hostile path.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSystemdUnit, escapeUnitPath, quoteExecWord } from "../../src/service-manager/systemd-unit.ts";
import { tempDir } from "../helpers/temp.ts";

type Unit = Record<string, Record<string, string[]>>;

/** Sections → keys → values (a key may repeat); `#`/`;` comments; a trailing backslash joins lines. */
function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section: Record<string, string[]> | null = null;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] as string).trim();
    while (line.endsWith("\\") && i + 1 < lines.length)
      line = `${line.slice(0, -1)} ${(lines[++i] as string).trim()}`;
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[([^\]]+)\]$/.exec(line);
    if (head) {
      section = unit[head[1] as string] ??= {};
      continue;
    }
    const eq = line.indexOf("=");
    if (section === null || eq < 1) throw new Error(`unit: bad line ${JSON.stringify(line)}`);
    const key = line.slice(0, eq).trim();
    section[key] = [...(section[key] ?? []), line.slice(eq + 1).trim()];
  }
  return unit;
}

const C_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
  "'": "'",
  s: " ",
};

/** ExecStart= into argv: words split on whitespace, whole-word quotes, C escapes, then %% and $$. */
function splitExec(value: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i] as string)) i++;
    if (i >= value.length) break;
    let word = "";
    const quote = value[i] === '"' || value[i] === "'" ? (value[i++] as string) : null;
    for (;;) {
      if (i >= value.length) {
        if (quote) throw new Error("unit: unterminated quote");
        break;
      }
      const ch = value[i] as string;
      if (quote ? ch === quote : /\s/.test(ch)) {
        if (quote) {
          i++;
          if (i < value.length && !/\s/.test(value[i] as string))
            throw new Error("unit: text after a closing quote");
        }
        break;
      }
      if (ch === "\\") {
        const next = value[i + 1] as string;
        const decoded = C_ESCAPES[next];
        if (decoded === undefined) throw new Error(`unit: unknown escape \\${next}`);
        word += decoded;
        i += 2;
        continue;
      }
      word += ch;
      i++;
    }
    words.push(word);
  }
  return words.map((w, n) => {
    const specifiers = w.replace(/%(.)/g, (_m, c: string) => {
      if (c !== "%") throw new Error(`unit: specifier %${c} would be expanded`);
      return "%";
    });
    // The executable: systemd refuses quotes and backslashes in it and substitutes no variables there.
    if (n === 0) {
      if (/["'\\]/.test(specifiers)) throw new Error("unit: Executable name contains special characters");
      return specifiers;
    }
    if (specifiers.replaceAll("$$", "").includes("$")) throw new Error(`unit: ${w} would be substituted`);
    return specifiers.replaceAll("$$", "$");
  });
}

const ENV_FILE = "/home/ann/.config/gw/env";

test("every field of the unit", () => {
  const unit = parseUnit(buildSystemdUnit({ self: ["/usr/local/bin/gw"], envFilePath: ENV_FILE }));
  expect(Object.keys(unit)).toEqual(["Unit", "Service", "Install"]);
  expect(unit.Unit).toEqual({ Description: ["gw gateway (gw serve)"] });
  expect(unit.Service).toEqual({
    Type: ["simple"],
    ExecStart: ["/usr/local/bin/gw serve"],
    EnvironmentFile: [ENV_FILE],
    WorkingDirectory: ["%h"],
    Restart: ["always"],
    RestartSec: ["5"],
    RestartPreventExitStatus: ["2"],
  });
  expect(unit.Install).toEqual({ WantedBy: ["default.target"] });
  expect(splitExec(unit.Service?.ExecStart?.[0] as string)).toEqual(["/usr/local/bin/gw", "serve"]);
});

test("from source: bun, the absolute entry script, serve", () => {
  const unit = parseUnit(
    buildSystemdUnit({ self: ["/home/ann/.bun/bin/bun", "/home/ann/gw/src/main.ts"], envFilePath: ENV_FILE }),
  );
  expect(splitExec(unit.Service?.ExecStart?.[0] as string)).toEqual([
    "/home/ann/.bun/bin/bun",
    "/home/ann/gw/src/main.ts",
    "serve",
  ]);
});

// Arguments (the entry script from source) may hold anything but control characters.
const HOSTILE_WORDS = [
  "/src/my apps/main.ts",
  "/src/100%/main.ts",
  "/src/$HOME/main.ts",
  "/src/$" + "{X}/main.ts",
  '/src/"quoted"/main.ts',
  "/src/it's/main.ts",
  "/src/back\\slash/main.ts",
  "/src/a&b<c>;|/main.ts",
];
// The program itself: systemd refuses quotes and backslashes there and does not unescape $.
const HOSTILE_PROGRAMS = ["/opt/my apps/gw", "/opt/100%/gw", "/opt/a&b<c>;|(x)/gw"];

describe("ExecStart escaping", () => {
  for (const word of HOSTILE_WORDS) {
    test(`the argument ${JSON.stringify(word)} reads back exactly`, () => {
      const unit = parseUnit(buildSystemdUnit({ self: ["/usr/bin/bun", word], envFilePath: ENV_FILE }));
      expect(splitExec(unit.Service?.ExecStart?.[0] as string)).toEqual(["/usr/bin/bun", word, "serve"]);
    });
  }
  for (const program of HOSTILE_PROGRAMS) {
    test(`the program ${JSON.stringify(program)} reads back exactly`, () => {
      const unit = parseUnit(buildSystemdUnit({ self: [program], envFilePath: ENV_FILE }));
      expect(splitExec(unit.Service?.ExecStart?.[0] as string)).toEqual([program, "serve"]);
    });
  }

  test("a program path systemd could not start is refused with the fix", () => {
    for (const bad of ['/opt/"q"/gw', "/opt/it's/gw", "/opt/back\\slash/gw", "/opt/$X/gw"])
      expect(() => buildSystemdUnit({ self: [bad], envFilePath: ENV_FILE })).toThrow(
        /move gw to a plain path/,
      );
  });

  test("a lone ; is quoted, not a command separator", () => {
    expect(quoteExecWord(";")).toBe('";"');
    expect(splitExec(`/bin/gw ${quoteExecWord(";")}`)).toEqual(["/bin/gw", ";"]);
  });

  test("plain words stay unquoted; an empty word is quoted", () => {
    expect(quoteExecWord("/usr/local/bin/gw")).toBe("/usr/local/bin/gw");
    expect(quoteExecWord("")).toBe('""');
  });

  test("line breaks, tabs and other control characters are refused; the program must be absolute", () => {
    expect(() => quoteExecWord("/opt/a\nb")).toThrow(/line break/);
    expect(() => quoteExecWord("/opt/a\rb")).toThrow(/line break/);
    expect(() => quoteExecWord("/opt/a\tb")).toThrow(/control character/);
    expect(() => buildSystemdUnit({ self: ["/opt/a\nb/gw"], envFilePath: ENV_FILE })).toThrow(/line break/);
    expect(() => buildSystemdUnit({ self: ["gw"], envFilePath: ENV_FILE })).toThrow(/not absolute/);
  });
});

describe("EnvironmentFile escaping", () => {
  test("spaces stay, % is doubled, quotes are literal", () => {
    expect(escapeUnitPath("/home/a b/100%/'x\"/env", "the env file")).toBe("/home/a b/100%%/'x\"/env");
    const unit = parseUnit(buildSystemdUnit({ self: ["/bin/gw"], envFilePath: "/home/a b/100%/env" }));
    expect(unit.Service?.EnvironmentFile).toEqual(["/home/a b/100%%/env"]);
  });

  test("a line break, a trailing space or backslash, or a relative path is refused", () => {
    for (const bad of ["/home/a\nb/env", "/home/env ", "/home/env\\", "env"])
      expect(() => escapeUnitPath(bad, "the env file")).toThrow();
  });
});

const analyze = Bun.which("systemd-analyze");
test.skipIf(analyze === null)(
  "systemd-analyze verify accepts the unit and finds the program at a hostile path",
  () => {
    const dir = tempDir();
    const binDir = join(dir, "my apps", "100%", "a&b;c");
    mkdirSync(binDir, { recursive: true });
    const program = join(binDir, "gw");
    writeFileSync(program, "#!/bin/sh\nexit 0\n");
    chmodSync(program, 0o755);
    const envFile = join(dir, "conf dir", "env");
    mkdirSync(join(dir, "conf dir"));
    writeFileSync(envFile, "GW_BEARER_TOKEN=x\n");
    const unitFile = join(dir, "gw.service");
    const arg = join(dir, `it's "$HOME" 100% back\\slash`, "main.ts");
    writeFileSync(unitFile, buildSystemdUnit({ self: [program, arg], envFilePath: envFile }));
    const r = Bun.spawnSync([analyze as string, "verify", unitFile], { stdout: "pipe", stderr: "pipe" });
    const said = r.stdout.toString() + r.stderr.toString();
    expect(said).not.toContain("not executable");
    expect(said).not.toContain("special characters");
    expect(said).not.toMatch(/quoting|escape/i);
    expect(said).not.toMatch(/gw\.service:\d+:/); // no complaint about a line of the unit
    expect(r.exitCode).toBe(0);
  },
);
