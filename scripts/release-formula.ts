/**
 * `bun run scripts/release-formula.ts <version> <base-url> [homepage]` (`bun run release:formula`): fills the
 * Homebrew formula template packaging/homebrew/gw.rb with the version, the download base URL and each
 * binary's sha256 from dist/SHA256SUMS, and writes dist/gw.rb for the tap (docs/RELEASING.md).
 * package.json and dist/ are read from the working directory, the template from beside this script.
 * Pure builders are exported and unit-tested; the runner at the bottom only reads, writes and reports.
 * Every refusal names what is wrong and how to fix it.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The release binaries the formula installs (scripts/build.ts TARGETS), with their sha256 placeholder. */
export const PLATFORMS = [
  { file: "gw-darwin-arm64", placeholder: "SHA256_GW_DARWIN_ARM64" },
  { file: "gw-darwin-x64", placeholder: "SHA256_GW_DARWIN_X64" },
  { file: "gw-linux-x64", placeholder: "SHA256_GW_LINUX_X64" },
] as const;

export const TEMPLATE_PATH = join(import.meta.dir, "../packaging/homebrew/gw.rb");
export const SUMS_PATH = "dist/SHA256SUMS";
export const OUTPUT_PATH = "dist/gw.rb";
const REBUILD = "run `bun run build:release` first";
const RESUM = `recompute it after signing: (cd dist && shasum -a 256 ${PLATFORMS.map((p) => p.file).join(" ")} > SHA256SUMS)`;

export class FormulaError extends Error {
  override name = "FormulaError";
}

/** sha256sum / `shasum -a 256` output → file name → lowercase hex digest. Blank lines are ignored. */
export function parseSha256Sums(text: string, source = SUMS_PATH): Map<string, string> {
  const sums = new Map<string, string>();
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "") return;
    const m = /^([0-9a-fA-F]{64}) [ *](\S(?:.*\S)?)$/.exec(line);
    if (!m) {
      throw new FormulaError(
        `${source} line ${i + 1} is not "<64 hex digits>  <file>" (it reads ${JSON.stringify(line)}): ${REBUILD}`,
      );
    }
    const hash = (m[1] as string).toLowerCase();
    const file = m[2] as string;
    const previous = sums.get(file);
    if (previous !== undefined && previous !== hash) {
      throw new FormulaError(`${source} lists ${file} twice with different sums: ${REBUILD}`);
    }
    sums.set(file, hash);
  });
  return sums;
}

/** The sha256 of every release binary, or the first one missing. */
export function requireSums(sums: Map<string, string>, source = SUMS_PATH): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { file } of PLATFORMS) {
    const hash = sums.get(file);
    if (hash === undefined) throw new FormulaError(`${source} has no line for ${file}: ${REBUILD}`);
    out[file] = hash;
  }
  return out;
}

/** Release binaries whose bytes no longer match SHA256SUMS (signing rewrites them). */
export function staleSums(listed: Record<string, string>, actual: Record<string, string>): string[] {
  return Object.entries(actual)
    .filter(([file, hash]) => listed[file] !== undefined && listed[file] !== hash)
    .map(([file]) => file);
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

export function checkVersion(version: string): string {
  if (SEMVER.test(version)) return version;
  const hint = /^v\d/.test(version)
    ? `write ${version.slice(1)}, without the "v"`
    : "e.g. 0.2.0 or 1.0.0-rc.1";
  throw new FormulaError(
    `version ${JSON.stringify(version)} is not semver-like (MAJOR.MINOR.PATCH): ${hint}`,
  );
}

/** The formula's `gw --version` test only passes when the binaries were built from this version. */
export function checkVersionMatches(version: string, packageVersion: string): void {
  if (version !== packageVersion) {
    throw new FormulaError(
      `version ${version} is not package.json's ${packageVersion}, the version the binaries embed: ` +
        `set "version": "${version}" in package.json and ${REBUILD}, or pass ${packageVersion}`,
    );
  }
}

// RFC 3986 characters without "?", "#", "[", "]" and quotes: safe inside a Ruby double-quoted string.
const URL_CHARS = /^[A-Za-z0-9\-._~:/%@!$&'()*+,;=]+$/;

const BASE_URL_EXAMPLE =
  "pass the folder the release binaries are downloaded from, e.g. https://github.com/OWNER/gw/releases/download/v0.1.0";
const HOMEPAGE_EXAMPLE = "pass the project page, e.g. https://github.com/OWNER/gw";

/** An http(s) URL without query or fragment, trailing slashes removed. */
export function checkBaseUrl(url: string, what: "base URL" | "homepage" = "base URL"): string {
  const example = what === "base URL" ? BASE_URL_EXAMPLE : HOMEPAGE_EXAMPLE;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
    throw new FormulaError(`${what} ${JSON.stringify(url)} is not an https:// or http:// URL: ${example}`);
  }
  if (!URL_CHARS.test(url) || parsed.hostname === "") {
    throw new FormulaError(
      `${what} ${JSON.stringify(url)} has a query, fragment, space or quote: ${example}`,
    );
  }
  return url.replace(/\/+$/, "");
}

/** The project page: the repository for a GitHub release URL, else the download site itself. */
export function homepageFor(baseUrl: string): string {
  const url = new URL(baseUrl);
  const gh = /^\/([^/]+)\/([^/]+)\/releases\//.exec(url.pathname);
  return url.hostname === "github.com" && gh ? `https://github.com/${gh[1]}/${gh[2]}` : url.origin;
}

export interface FormulaInput {
  version: string;
  baseUrl: string;
  homepage: string;
  /** file name → sha256, one per PLATFORMS entry */
  sums: Record<string, string>;
}

/** Template text → formula text. Drops "# TEMPLATE:" lines; every placeholder must be known and used. */
export function renderFormula(template: string, input: FormulaInput): string {
  const values: Record<string, string> = {
    VERSION: checkVersion(input.version),
    BASE_URL: checkBaseUrl(input.baseUrl),
    HOMEPAGE: checkBaseUrl(input.homepage, "homepage"),
  };
  for (const { file, placeholder } of PLATFORMS) {
    const hash = input.sums[file];
    if (hash === undefined || !/^[0-9a-f]{64}$/.test(hash)) {
      throw new FormulaError(`no valid sha256 for ${file}: ${REBUILD}`);
    }
    values[placeholder] = hash;
  }
  const body = template
    .split("\n")
    .filter((line) => !line.startsWith("# TEMPLATE:"))
    .join("\n");
  const used = new Set<string>();
  const out = body.replace(/\{\{([A-Z0-9_]+)\}\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) {
      throw new FormulaError(`the template has an unknown placeholder {{${key}}}: fix ${TEMPLATE_PATH}`);
    }
    used.add(key);
    return value;
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length > 0) {
    throw new FormulaError(
      `the template never uses ${unused.map((k) => `{{${k}}}`).join(", ")}: fix ${TEMPLATE_PATH}`,
    );
  }
  if (/\{\{|\}\}/.test(out)) {
    throw new FormulaError(`the template has a malformed placeholder: fix ${TEMPLATE_PATH}`);
  }
  return out;
}

const USAGE =
  "usage: bun run release:formula <version> <base-url> [homepage]\n" +
  "  e.g. bun run release:formula 0.1.0 https://github.com/OWNER/gw/releases/download/v0.1.0\n" +
  "  run from the repository root, after `bun run build:release` and signing (docs/RELEASING.md)\n";

function readIn(cwd: string, path: string, fix: string): string {
  const full = resolve(cwd, path);
  if (!existsSync(full)) throw new FormulaError(`${path} not found in ${cwd}: ${fix}`);
  return readFileSync(full, "utf8");
}

/** The thin runner: argv and the working directory in, dist/gw.rb out; returns the exit status. */
export function main(
  args: string[],
  cwd: string,
  out: (s: string) => void,
  err: (s: string) => void,
): number {
  if (args.length < 2 || args.length > 3 || args.some((a) => a.startsWith("-"))) {
    err(USAGE);
    return 2;
  }
  const [version, baseUrl, homepage] = args as [string, string, string | undefined];
  try {
    checkVersion(version);
    const base = checkBaseUrl(baseUrl);
    const pkg = JSON.parse(readIn(cwd, "package.json", "run this from the repository root")) as {
      version?: string;
    };
    checkVersionMatches(version, String(pkg.version));
    const listed = requireSums(parseSha256Sums(readIn(cwd, SUMS_PATH, REBUILD)));
    const actual: Record<string, string> = {};
    for (const { file } of PLATFORMS) {
      const path = resolve(cwd, "dist", file);
      if (existsSync(path)) actual[file] = createHash("sha256").update(readFileSync(path)).digest("hex");
    }
    const stale = staleSums(listed, actual);
    if (stale.length > 0) {
      throw new FormulaError(`${SUMS_PATH} does not match dist/${stale.join(", dist/")}: ${RESUM}`);
    }
    const formula = renderFormula(readFileSync(TEMPLATE_PATH, "utf8"), {
      version,
      baseUrl: base,
      homepage: homepage ?? homepageFor(base),
      sums: listed,
    });
    const target = resolve(cwd, OUTPUT_PATH);
    writeFileSync(target, formula);
    out(
      `wrote ${target} (gw ${version}, ${PLATFORMS.length} binaries from ${base}/)\n` +
        "next: copy it to Formula/gw.rb in the tap repository, commit and push\n",
    );
    return 0;
  } catch (e) {
    if (!(e instanceof FormulaError)) throw e;
    err(`release-formula: ${e.message}\n`);
    return 1;
  }
}

if (import.meta.main) {
  process.exitCode = main(
    process.argv.slice(2),
    process.cwd(),
    (s) => process.stdout.write(s),
    (s) => process.stderr.write(s),
  );
}
