/**
 * The LaunchAgent plist, read back with an XML plist reader of our own (test/helpers/plist.ts) and, where
 * python3 is present, with Python's plistlib, and compared field by field; hostile values (&, <, >,
 * quotes, spaces, `]]>`) survive exactly, and what a plist cannot carry is refused.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ServiceError } from "../../src/service-manager/errors.ts";
import { buildLaunchdPlist, launchdLogPaths } from "../../src/service-manager/launchd-plist.ts";
import { renderPlist } from "../../src/service-manager/plist-xml.ts";
import { parsePlist } from "../helpers/plist.ts";
import { tempDir } from "../helpers/temp.ts";

const HOME = "/Users/ann";
const LOGS = "/Users/ann/Library/Logs/gw";
const TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

function build(self: string[], environment: [string, string][] = [["GW_BEARER_TOKEN", TOKEN]]) {
  return buildLaunchdPlist({ self, environment, logDir: LOGS, homeDir: HOME });
}

test("every field of the job, as a plist reader sees it", () => {
  const xml = build(
    ["/opt/homebrew/Cellar/gw/0.1.0/bin/gw"],
    [
      ["GW_BEARER_TOKEN", TOKEN],
      ["GW_BIND_PORT", "8181"],
    ],
  );
  const job = parsePlist(xml) as Record<string, unknown>;
  expect(Object.keys(job)).toEqual([
    "Label",
    "ProgramArguments",
    "EnvironmentVariables",
    "WorkingDirectory",
    "StandardOutPath",
    "StandardErrorPath",
    "RunAtLoad",
    "KeepAlive",
    "ProcessType",
  ]);
  expect(job.Label).toBe("dev.gw.serve");
  expect(job.ProgramArguments).toEqual(["/opt/homebrew/Cellar/gw/0.1.0/bin/gw", "serve"]);
  expect(job.EnvironmentVariables).toEqual({
    GW_LOG_STDERR_LEVEL: "error",
    GW_BEARER_TOKEN: TOKEN,
    GW_BIND_PORT: "8181",
  });
  expect(job.WorkingDirectory).toBe(HOME);
  expect(job.StandardOutPath).toBe("/Users/ann/Library/Logs/gw/launchd.out.log");
  expect(job.StandardErrorPath).toBe("/Users/ann/Library/Logs/gw/launchd.err.log");
  expect(job.RunAtLoad).toBe(true);
  expect(job.KeepAlive).toBe(true);
  expect(job.ProcessType).toBe("Interactive");
  expect(launchdLogPaths(LOGS)).toEqual({ out: job.StandardOutPath, err: job.StandardErrorPath } as never);
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC')).toBe(true);
});

test("from source: bun and the absolute entry script, then serve", () => {
  const job = parsePlist(build(["/usr/local/bin/bun", "/Users/ann/src/gw/src/main.ts"])) as Record<
    string,
    unknown
  >;
  expect(job.ProgramArguments).toEqual(["/usr/local/bin/bun", "/Users/ann/src/gw/src/main.ts", "serve"]);
});

const HOSTILE = [
  "a&b",
  "<script>",
  "x < y > z",
  "&amp; already escaped",
  "]]>",
  `"double" and 'single'`,
  "spaces  inside",
  "tab\tinside",
  "naïve ✓ 👋",
  "$HOME `id` ;|*",
];

describe("escaping", () => {
  test("hostile values survive exactly in the program path, arguments and environment", () => {
    const env = HOSTILE.map((v, i) => [`GW_V${i}`, v] as [string, string]);
    const self = ["/Users/a&b <c>/\"gw\" 'x'/gw"];
    const xml = build(self, env);
    const job = parsePlist(xml) as Record<string, unknown>;
    expect(job.ProgramArguments).toEqual([...self, "serve"]);
    expect(job.EnvironmentVariables).toEqual({ GW_LOG_STDERR_LEVEL: "error", ...Object.fromEntries(env) });
    // No raw markup character reaches the text: every & starts an entity.
    expect(xml).not.toMatch(/&(?!(amp|lt|gt);)/);
    expect(xml).not.toContain("<script>");
  });

  test("keys are escaped too", () => {
    const xml = renderPlist({ "a&<b>": "v" });
    expect(parsePlist(xml)).toEqual({ "a&<b>": "v" });
  });

  for (const [what, value] of [
    ["a newline", "a\nb"],
    ["a carriage return", "a\rb"],
    ["NUL", "a\u0000b"],
    ["an escape character", "a\u001bb"],
    ["U+FFFE", "a\ufffeb"],
    ["a lone surrogate", "a\ud800b"],
  ] as const) {
    test(`${what} is refused, naming the variable`, () => {
      expect(() => build(["/bin/gw"], [["GW_BAD", value]])).toThrow(ServiceError);
      expect(() => build(["/bin/gw"], [["GW_BAD", value]])).toThrow(/GW_BAD cannot be written/);
    });
  }

  test("a relative program path is refused", () => {
    expect(() => build(["gw"])).toThrow(/not absolute/);
  });
});

describe("the reader used above is honest", () => {
  const wrap = (inner: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n${inner}\n</dict>\n</plist>\n`;
  test("it refuses a bare & or <, unknown elements, duplicate keys and stray text", () => {
    expect(() => parsePlist(wrap("<key>k</key><string>a&b</string>"))).toThrow(/bare &/);
    expect(() => parsePlist(wrap("<key>k</key><string>a<b</string>"))).toThrow();
    expect(() => parsePlist(wrap("<key>k</key><real>1.5</real>"))).toThrow(/unsupported/);
    expect(() => parsePlist(wrap("<key>k</key><true/><key>k</key><false/>"))).toThrow(/duplicate/);
    expect(() => parsePlist(wrap("stray<key>k</key><true/>"))).toThrow(/text between/);
    expect(() => parsePlist(wrap("<key>k</key><string>x</strong>"))).toThrow();
  });
  test("it decodes references and reads every plist type", () => {
    expect(
      parsePlist(
        wrap(
          "<key>s</key><string>&lt;&#38;&#x3e;&quot;&apos;</string><key>i</key><integer>-7</integer><key>a</key><array><true/><false/><string/></array><key>d</key><dict/>",
        ),
      ),
    ).toEqual({ s: "<&>\"'", i: -7, a: [true, false, ""], d: {} });
  });
});

const python = Bun.which("python3");
test.skipIf(python === null)("Python's plistlib reads the same values", () => {
  const env = HOSTILE.map((v, i) => [`GW_V${i}`, v] as [string, string]);
  const xml = build(["/Applications/g w&co/gw"], env);
  const file = join(tempDir(), "dev.gw.serve.plist");
  writeFileSync(file, xml);
  const r = Bun.spawnSync(
    [
      python as string,
      "-c",
      "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))))",
      file,
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  expect(r.stderr.toString()).toBe("");
  expect(JSON.parse(r.stdout.toString())).toEqual(parsePlist(xml) as object);
  expect(JSON.parse(r.stdout.toString()).EnvironmentVariables).toEqual({
    GW_LOG_STDERR_LEVEL: "error",
    ...Object.fromEntries(env),
  });
});
