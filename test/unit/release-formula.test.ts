/**
 * scripts/release-formula.ts: SHA256SUMS parsing, input checks, the formula rendered from the real template
 * (read back with regexes that follow its Ruby blocks, and `ruby -c` where ruby is installed), and the runner
 * as a process in a temporary project folder, so the real dist/ is never touched.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { TARGETS } from "../../scripts/build.ts";
import {
  checkBaseUrl,
  checkVersion,
  checkVersionMatches,
  homepageFor,
  main,
  PLATFORMS,
  parseSha256Sums,
  renderFormula,
  requireSums,
  staleSums,
  TEMPLATE_PATH,
} from "../../scripts/release-formula.ts";
import { ROOT } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const SCRIPT = join(ROOT, "scripts/release-formula.ts");
const TEMPLATE = readFileSync(TEMPLATE_PATH, "utf8");
const BASE = "https://github.com/example-owner/gw/releases/download/v1.2.3";
const sha = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
const SUMS: Record<string, string> = {
  "gw-darwin-arm64": sha("darwin arm64"),
  "gw-darwin-x64": sha("darwin x64"),
  "gw-linux-x64": sha("linux x64"),
};
const sumsText = (sums: Record<string, string>) =>
  Object.entries(sums)
    .map(([file, hash]) => `${hash}  ${file}\n`)
    .join("");
const render = (over: Partial<Parameters<typeof renderFormula>[1]> = {}) =>
  renderFormula(TEMPLATE, {
    version: "1.2.3",
    baseUrl: BASE,
    homepage: homepageFor(BASE),
    sums: SUMS,
    ...over,
  });

/** The body of `<name> do … end` at the given indentation (the formula is indented two spaces a level). */
function block(ruby: string, name: string, indent: number): string {
  const pad = " ".repeat(indent);
  const m = new RegExp(`^${pad}${name} do\\n([\\s\\S]*?)^${pad}end$`, "m").exec(ruby);
  if (!m) throw new Error(`no "${name} do" block at indent ${indent}`);
  return m[1] as string;
}
function download(body: string): { url: string; sha256: string } {
  const url = /^\s*url "([^"]+)"$/m.exec(body)?.[1];
  const sha256 = /^\s*sha256 "([^"]+)"$/m.exec(body)?.[1];
  if (!url || !sha256) throw new Error(`no url/sha256 in ${body}`);
  return { url, sha256 };
}

test("the formula covers exactly the binaries scripts/build.ts releases", () => {
  expect(PLATFORMS.map((p): string => p.file)).toEqual(TARGETS.map(([, out]) => basename(out)));
});

test("parseSha256Sums reads sha256sum and shasum output, text and binary mode", () => {
  const upper = sha("x").toUpperCase();
  const text = `${SUMS["gw-darwin-arm64"]}  gw-darwin-arm64\r\n\n${upper} *gw-linux-x64\n`;
  expect(parseSha256Sums(text)).toEqual(
    new Map([
      ["gw-darwin-arm64", SUMS["gw-darwin-arm64"] as string],
      ["gw-linux-x64", sha("x")],
    ]),
  );
  expect(parseSha256Sums(`${sumsText(SUMS)}${sumsText(SUMS)}`).size).toBe(3);
  expect(parseSha256Sums("")).toEqual(new Map());
});

test.each([
  ["a short digest", `abc123  gw-darwin-arm64\n`, 1],
  ["a missing file name", `${sha("x")}\n`, 1],
  ["one space only", `${sha("x")} gw-darwin-arm64\n`, 1],
  ["a non-hex digest", `${"g".repeat(64)}  gw-darwin-arm64\n`, 1],
  ["garbage after good lines", `${sumsText(SUMS)}not a sum line\n`, 4],
])("parseSha256Sums refuses %s and names the line", (_, text, line) => {
  expect(() => parseSha256Sums(text)).toThrow(
    new RegExp(`^dist/SHA256SUMS line ${line} is not .*: run \`bun run build:release\` first$`),
  );
});

test("parseSha256Sums refuses one file listed with two different sums", () => {
  const text = `${sha("a")}  gw-linux-x64\n${sha("b")}  gw-linux-x64\n`;
  expect(() => parseSha256Sums(text)).toThrow("dist/SHA256SUMS lists gw-linux-x64 twice with different sums");
});

test.each(PLATFORMS.map((p) => p.file))("requireSums names a missing %s and the fix", (file) => {
  const sums = parseSha256Sums(
    sumsText(Object.fromEntries(Object.entries(SUMS).filter(([f]) => f !== file))),
  );
  expect(() => requireSums(sums)).toThrow(
    `dist/SHA256SUMS has no line for ${file}: run \`bun run build:release\` first`,
  );
});

test("requireSums returns one sum per binary and ignores other lines", () => {
  const text = `${sumsText(SUMS)}${sha("gw")}  gw\n`;
  expect(requireSums(parseSha256Sums(text))).toEqual(SUMS);
});

test("staleSums lists binaries whose bytes changed after SHA256SUMS was written", () => {
  expect(staleSums(SUMS, {})).toEqual([]);
  expect(staleSums(SUMS, { ...SUMS })).toEqual([]);
  expect(staleSums(SUMS, { ...SUMS, "gw-darwin-x64": sha("signed") })).toEqual(["gw-darwin-x64"]);
});

test.each([
  "0.1.0",
  "1.0.0",
  "10.20.30",
  "1.0.0-rc.1",
  "1.0.0-alpha-2",
  "1.2.3+build.7",
  "1.2.3-beta.2+exp.sha.5114f85",
])("checkVersion accepts %p", (v) => {
  expect(checkVersion(v)).toBe(v);
});

test.each([
  ["v0.1.0", 'write 0.1.0, without the "v"'],
  ["0.1", "e.g. 0.2.0"],
  ["01.2.3", "e.g. 0.2.0"],
  ["1.2.3.4", "e.g. 0.2.0"],
  ["", "e.g. 0.2.0"],
  [" 1.2.3", "e.g. 0.2.0"],
  ["latest", "e.g. 0.2.0"],
  ['1.2.3"; system "x', "e.g. 0.2.0"],
  ["1.2.3-", "e.g. 0.2.0"],
])("checkVersion refuses %p", (v, hint) => {
  expect(() => checkVersion(v)).toThrow(
    `version ${JSON.stringify(v)} is not semver-like (MAJOR.MINOR.PATCH): ${hint}`,
  );
});

test("checkVersionMatches wants package.json's version, which the binaries embed", () => {
  expect(() => checkVersionMatches("1.2.3", "1.2.3")).not.toThrow();
  expect(() => checkVersionMatches("1.2.4", "1.2.3")).toThrow(
    'version 1.2.4 is not package.json\'s 1.2.3, the version the binaries embed: set "version": "1.2.4" in package.json and run `bun run build:release` first, or pass 1.2.3',
  );
});

test("checkBaseUrl accepts http(s) folder URLs and drops trailing slashes", () => {
  expect(checkBaseUrl(BASE)).toBe(BASE);
  expect(checkBaseUrl(`${BASE}//`)).toBe(BASE);
  expect(checkBaseUrl("http://downloads.example.test/gw/1.2.3/")).toBe(
    "http://downloads.example.test/gw/1.2.3",
  );
  expect(checkBaseUrl("https://example.test:8443/a%20b/~x")).toBe("https://example.test:8443/a%20b/~x");
});

test.each([
  ["ftp://example.test/gw", "is not an https:// or http:// URL"],
  ["file:///tmp/dist", "is not an https:// or http:// URL"],
  ["github.com/o/gw/releases/download/v1", "is not an https:// or http:// URL"],
  ["", "is not an https:// or http:// URL"],
  ["https://", "is not an https:// or http:// URL"],
  ["https://example.test/gw?tag=1", "has a query, fragment, space or quote"],
  ["https://example.test/gw#{`id`}", "has a query, fragment, space or quote"],
  ['https://example.test/gw"', "has a query, fragment, space or quote"],
  ["https://example.test/g w", "has a query, fragment, space or quote"],
  ["https://example.test/g\\w", "has a query, fragment, space or quote"],
])("checkBaseUrl refuses %p", (url, why) => {
  expect(() => checkBaseUrl(url)).toThrow(
    `base URL ${JSON.stringify(url)} ${why}: pass the folder the release binaries are downloaded from, e.g. https://github.com/OWNER/gw/releases/download/v0.1.0`,
  );
});

test("homepageFor: the repository of a GitHub release, else the download site", () => {
  expect(homepageFor(BASE)).toBe("https://github.com/example-owner/gw");
  expect(homepageFor("https://downloads.example.test/gw/1.2.3")).toBe("https://downloads.example.test");
  expect(homepageFor("https://github.com/example-owner")).toBe("https://github.com");
});

test("the template itself is complete: every placeholder is one the renderer fills", () => {
  const keys = new Set([...TEMPLATE.matchAll(/\{\{([A-Z0-9_]+)\}\}/g)].map((m) => m[1]));
  expect(keys).toEqual(new Set(["VERSION", "HOMEPAGE", "BASE_URL", ...PLATFORMS.map((p) => p.placeholder)]));
});

test("one licence everywhere: LICENSE (MIT, gw's name and a year), package.json and the formula agree", () => {
  const text = readFileSync(join(ROOT, "LICENSE"), "utf8");
  expect(text.split("\n")[0]).toBe("MIT License");
  expect(text).toMatch(/^Copyright \(c\) 20\d\d the gw authors$/m);
  expect(text).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { license: string };
  expect(pkg.license).toBe("MIT");
  expect(TEMPLATE).toMatch(new RegExp(`^ {2}license "${pkg.license}"$`, "m"));
});

test("the rendered formula: version, one url and matching sha256 per platform, no placeholder left", () => {
  const rb = render();
  expect(rb).not.toMatch(/\{\{|\}\}|TEMPLATE/);
  expect(rb).toMatch(/^class Gw < Formula$/m);
  expect(rb).toMatch(/^ {2}version "1\.2\.3"$/m);
  expect(rb).toMatch(/^ {2}homepage "https:\/\/github\.com\/example-owner\/gw"$/m);
  expect(rb).toMatch(/^ {2}license "MIT"$/m);
  expect(rb).toMatch(/^ {2}desc "[^"]{1,79}"$/m);
  expect(rb).toMatch(/^# gw 1\.2\.3 for a Homebrew tap/m);

  const mac = block(rb, "on_macos", 2);
  const linux = block(rb, "on_linux", 2);
  const found = {
    "gw-darwin-arm64": download(block(mac, "on_arm", 4)),
    "gw-darwin-x64": download(block(mac, "on_intel", 4)),
    "gw-linux-x64": download(block(linux, "on_intel", 4)),
  };
  for (const [file, d] of Object.entries(found)) {
    expect(d).toEqual({ url: `${BASE}/${file}`, sha256: SUMS[file] as string });
  }
  expect(() => block(linux, "on_arm", 4)).toThrow();
  expect(linux).toContain("depends_on arch: :x86_64");
  // Exactly the three downloads, nothing at the top level.
  expect([...rb.matchAll(/^\s*url "/gm)]).toHaveLength(3);
  expect([...rb.matchAll(/^\s*sha256 "[0-9a-f]{64}"$/gm)]).toHaveLength(3);
});

test("the rendered formula installs the platform's binary as gw and tests `gw --version`", () => {
  const rb = render();
  const install = /^ {2}def install\n([\s\S]*?)^ {2}end$/m.exec(rb)?.[1] ?? "";
  for (const file of PLATFORMS.map((p) => p.file)) expect(install).toContain(`"${file}"`);
  expect(install).toMatch(/^\s*bin\.install binary => "gw"$/m);
  expect(install).not.toMatch(/on_(macos|linux|arm|intel)/); // Homebrew: use OS.mac? etc. inside install
  const t = block(rb, "test", 2);
  expect(t.trim()).toBe('assert_match version.to_s, shell_output("#{bin}/gw --version")');
});

test("renderFormula checks its own inputs", () => {
  expect(() => render({ version: "v1.2.3" })).toThrow("is not semver-like");
  expect(() => render({ baseUrl: "ftp://x.test" })).toThrow("is not an https:// or http:// URL");
  expect(() => render({ homepage: "example.test" })).toThrow(
    'homepage "example.test" is not an https:// or http:// URL: pass the project page, e.g. https://github.com/OWNER/gw',
  );
  const { "gw-darwin-x64": _, ...missing } = SUMS;
  expect(() => render({ sums: missing })).toThrow("no valid sha256 for gw-darwin-x64");
  expect(() => render({ sums: { ...SUMS, "gw-linux-x64": "nope" } })).toThrow(
    "no valid sha256 for gw-linux-x64",
  );
  expect(render({ baseUrl: `${BASE}/` })).toContain(`url "${BASE}/gw-linux-x64"`);
});

test("renderFormula refuses a template with an unknown, unused or malformed placeholder", () => {
  const input = { version: "1.2.3", baseUrl: BASE, homepage: BASE, sums: SUMS };
  expect(() => renderFormula(`${TEMPLATE}# {{REVISION}}\n`, input)).toThrow(
    "the template has an unknown placeholder {{REVISION}}",
  );
  expect(() => renderFormula(TEMPLATE.replace('"{{SHA256_GW_LINUX_X64}}"', '"0"'), input)).toThrow(
    "the template never uses {{SHA256_GW_LINUX_X64}}",
  );
  expect(() => renderFormula(`${TEMPLATE}# {{ VERSION }}\n`, input)).toThrow("malformed placeholder");
});

const ruby = Bun.which("ruby");
test("ruby -c accepts the template and the rendered formula", () => {
  if (!ruby) return; // CI installs ruby; without it only this check is skipped
  const file = join(tempDir(), "gw.rb");
  for (const text of [TEMPLATE, render()]) {
    writeFileSync(file, text);
    const r = Bun.spawnSync([ruby, "-c", file], { stdout: "pipe", stderr: "pipe" });
    expect({ exit: r.exitCode, out: r.stdout.toString().trim(), err: r.stderr.toString() }).toEqual({
      exit: 0,
      out: "Syntax OK",
      err: "",
    });
  }
});

/** A project folder as the runner expects it: package.json and dist/ with the three binaries and their sums. */
function project(version = "1.2.3"): string {
  const dir = tempDir("gw-release-");
  mkdirSync(join(dir, "dist"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "gw", version }));
  let sums = "";
  for (const { file } of PLATFORMS) {
    const bytes = `fake ${file} binary\n`;
    writeFileSync(join(dir, "dist", file), bytes);
    sums += `${sha(bytes)}  ${file}\n`;
  }
  writeFileSync(join(dir, "dist/SHA256SUMS"), sums);
  return dir;
}
function run(cwd: string, args: string[]) {
  const r = Bun.spawnSync([process.execPath, SCRIPT, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { exit: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
function runIn(cwd: string, args: string[]) {
  const out = { stdout: "", stderr: "" };
  const exit = main(
    args,
    cwd,
    (s) => {
      out.stdout += s;
    },
    (s) => {
      out.stderr += s;
    },
  );
  return { exit, ...out };
}

test("the runner, as a process in a project folder, writes dist/gw.rb there and says where", () => {
  const realOutput = join(ROOT, "dist/gw.rb");
  const before = existsSync(realOutput) ? statSync(realOutput).mtimeMs : undefined;
  const dir = project();
  const r = run(dir, ["1.2.3", `${BASE}/`]);
  expect(r).toEqual({
    exit: 0,
    stdout:
      `wrote ${join(dir, "dist/gw.rb")} (gw 1.2.3, 3 binaries from ${BASE}/)\n` +
      "next: copy it to Formula/gw.rb in the tap repository, commit and push\n",
    stderr: "",
  });
  const rb = readFileSync(join(dir, "dist/gw.rb"), "utf8");
  const sums = requireSums(parseSha256Sums(readFileSync(join(dir, "dist/SHA256SUMS"), "utf8")));
  expect(rb).toBe(render({ sums }));
  expect(download(block(block(rb, "on_macos", 2), "on_intel", 4))).toEqual({
    url: `${BASE}/gw-darwin-x64`,
    sha256: sha("fake gw-darwin-x64 binary\n"),
  });
  expect(existsSync(realOutput) ? statSync(realOutput).mtimeMs : undefined).toBe(before);
  if (ruby)
    expect(
      Bun.spawnSync([ruby, "-c", join(dir, "dist/gw.rb")])
        .stdout.toString()
        .trim(),
    ).toBe("Syntax OK");
});

test("the runner takes an explicit homepage and works without the binaries beside SHA256SUMS", () => {
  const dir = project();
  for (const { file } of PLATFORMS) Bun.spawnSync(["rm", join(dir, "dist", file)]);
  const r = runIn(dir, ["1.2.3", "https://downloads.example.test/gw/1.2.3", "https://gw.example.test"]);
  expect(r.exit).toBe(0);
  const rb = readFileSync(join(dir, "dist/gw.rb"), "utf8");
  expect(rb).toMatch(/^ {2}homepage "https:\/\/gw\.example\.test"$/m);
  expect(rb).toContain('url "https://downloads.example.test/gw/1.2.3/gw-darwin-arm64"');
});

test("the runner prints its usage and exits 2 on wrong arguments", () => {
  const dir = project();
  for (const args of [[], ["1.2.3"], ["1.2.3", BASE, "https://h.test", "extra"], ["--help", BASE]]) {
    const r = run(dir, args);
    expect(r.exit).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith("usage: bun run release:formula <version> <base-url> [homepage]\n");
  }
  expect(existsSync(join(dir, "dist/gw.rb"))).toBe(false);
});

test("the runner refuses, exits 1 and writes nothing when a check fails", () => {
  const cases: [string, (dir: string) => void, string[], string][] = [
    ["a v-prefixed version", () => {}, ["v1.2.3", BASE], 'write 1.2.3, without the "v"'],
    ["a bare host", () => {}, ["1.2.3", "example.test/gw"], "is not an https:// or http:// URL"],
    [
      "a version package.json does not have",
      () => {},
      ["1.2.4", BASE],
      "version 1.2.4 is not package.json's 1.2.3, the version the binaries embed",
    ],
    [
      "no package.json (not the repository root)",
      (d) => Bun.spawnSync(["rm", join(d, "package.json")]),
      ["1.2.3", BASE],
      "package.json not found in",
    ],
    [
      "no SHA256SUMS",
      (d) => Bun.spawnSync(["rm", join(d, "dist/SHA256SUMS")]),
      ["1.2.3", BASE],
      "dist/SHA256SUMS not found in",
    ],
    [
      "no line for gw-darwin-x64",
      (d) => {
        const p = join(d, "dist/SHA256SUMS");
        writeFileSync(p, readFileSync(p, "utf8").replace(/^.*gw-darwin-x64\n/m, ""));
      },
      ["1.2.3", BASE],
      "dist/SHA256SUMS has no line for gw-darwin-x64: run `bun run build:release` first",
    ],
    [
      "a binary signed after SHA256SUMS was written",
      (d) => writeFileSync(join(d, "dist/gw-darwin-arm64"), "signed bytes\n"),
      ["1.2.3", BASE],
      "dist/SHA256SUMS does not match dist/gw-darwin-arm64: recompute it after signing: (cd dist && shasum -a 256 gw-darwin-arm64 gw-darwin-x64 gw-linux-x64 > SHA256SUMS)",
    ],
  ];
  for (const [what, spoil, args, message] of cases) {
    const dir = project();
    spoil(dir);
    const r = runIn(dir, args);
    expect({ what, exit: r.exit, stdout: r.stdout }).toEqual({ what, exit: 1, stdout: "" });
    expect(r.stderr).toStartWith("release-formula: ");
    expect(r.stderr).toContain(message);
    expect(existsSync(join(dir, "dist/gw.rb"))).toBe(false);
  }
});

test("a refusal from the process goes to stderr with exit 1", () => {
  const dir = project();
  Bun.spawnSync(["rm", join(dir, "dist/SHA256SUMS")]);
  const r = run(dir, ["1.2.3", BASE]);
  expect(r).toEqual({
    exit: 1,
    stdout: "",
    stderr: `release-formula: dist/SHA256SUMS not found in ${dir}: run \`bun run build:release\` first\n`,
  });
});
