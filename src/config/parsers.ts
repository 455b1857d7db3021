/**
 * Value parsers for settings. Each returns the parsed value or throws SettingError, whose message
 * says what is wrong and how to fix it; the loader adds the variable name. Pure.
 */
import { isAbsolute } from "node:path";
import { isSupportedCountry } from "libphonenumber-js/min";
import { DEVICE_SERVICES, type DeviceService, parseServices } from "../allowlist/services.ts";
import { isReactionEmoji } from "../core/emoji.ts";
import { type HostInfo, resolvePath } from "./paths.ts";

export class SettingError extends Error {
  constructor(
    readonly problem: string,
    readonly fix: string,
  ) {
    super(problem);
  }
}

export type Parser<T> = (raw: string, host: HostInfo) => T;

export const text: Parser<string> = (raw) => raw;

export const hostName: Parser<string> = (raw) => {
  if (/\s|\//.test(raw)) throw new SettingError("is not a host name or address", "use e.g. 127.0.0.1");
  return raw;
};

export function integer(min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> {
  return (raw) => {
    if (!/^[+-]?\d+$/.test(raw.trim())) throw new SettingError("is not a whole number", rangeFix(min, max));
    const n = Number(raw);
    if (n < min || n > max) throw new SettingError(`is out of range`, rangeFix(min, max));
    return n;
  };
}

export const port: Parser<number> = (raw, host) => {
  try {
    return integer(0, 65535)(raw, host);
  } catch {
    throw new SettingError("is not a port number", "use a whole number from 0 to 65535");
  }
};

/** A finite number strictly greater than zero (decimals allowed). */
export const positiveNumber: Parser<number> = (raw) => {
  const n = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(n))
    throw new SettingError("is not a number", "use a positive number such as 1 or 0.5");
  if (n <= 0) throw new SettingError("must be greater than zero", "use a positive number such as 1 or 0.5");
  return n;
};

export const flag: Parser<boolean> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false") return false;
  throw new SettingError("is not 0 or 1", "use 1 to turn it on or 0 to turn it off");
};

export const httpUrl: Parser<string> = (raw) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingError("is not a URL", "use an absolute http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SettingError("is not an http(s) URL", "use an absolute http:// or https:// URL");
  }
  return raw.replace(/\/+$/, "");
};

export const path: Parser<string> = (raw, host) => {
  if (raw.includes("\0")) throw new SettingError("contains a NUL byte", "use a plain file path");
  return resolvePath(raw, host);
};

export const absoluteDirList: Parser<string[]> = (raw) => {
  const dirs = raw.split(":").filter((d) => d !== "");
  const bad = dirs.find((d) => !isAbsolute(d) || d.includes("\0"));
  if (bad !== undefined || dirs.length === 0) {
    throw new SettingError(
      `has a relative or empty entry${bad ? ` (${bad})` : ""}`,
      "list absolute directories separated by ':'",
    );
  }
  return dirs;
};

export function integerList(count: number, min: number): Parser<number[]> {
  return (raw, host) => {
    const parts = raw.split(",").map((p) => p.trim());
    const fix = `list exactly ${count} whole numbers of milliseconds separated by commas, e.g. 5000,30000,120000,600000`;
    if (parts.length !== count) throw new SettingError(`has ${parts.length} values, not ${count}`, fix);
    return parts.map((p) => {
      try {
        return integer(min)(p, host);
      } catch {
        throw new SettingError(`has a value that is not a whole number ≥ ${min} (${p})`, fix);
      }
    });
  };
}

export function oneOf<const T extends string>(values: readonly T[]): Parser<T> {
  return (raw) => {
    const v = raw.trim().toLowerCase();
    if ((values as readonly string[]).includes(v)) return v as T;
    throw new SettingError("is not an accepted value", `use one of ${values.join(", ")}`);
  };
}

/**
 * A comma list of the words in `values`, or `all` (every one); duplicates are dropped, order kept as
 * listed. An empty list, or a word not listed, is refused.
 */
export function listOf<const T extends string>(values: readonly T[]): Parser<T[]> {
  return (raw) => {
    const words = raw
      .split(",")
      .map((w) => w.trim().toLowerCase())
      .filter((w) => w !== "");
    if (words.length === 1 && words[0] === "all") return [...values];
    const bad = words.find((w) => !(values as readonly string[]).includes(w));
    if (bad !== undefined || words.length === 0)
      throw new SettingError(
        `has ${bad === undefined ? "no value" : `an unknown value (${bad})`}`,
        `list values separated by commas from ${values.join(", ")}, or all`,
      );
    return [...new Set(words)] as T[];
  };
}

function rangeFix(min: number, max: number): string {
  return max === Number.MAX_SAFE_INTEGER
    ? `use a whole number ≥ ${min}`
    : `use a whole number from ${min} to ${max}`;
}

/** Messages services (iMessage, SMS, RCS; any case), comma-separated, at least one. */
export const services: Parser<DeviceService[]> = (raw) => {
  const parsed = parseServices(raw.split(",").filter((w) => w.trim() !== ""));
  if (!parsed.ok)
    throw new SettingError(
      `has ${parsed.problem}`,
      `list one or more of ${DEVICE_SERVICES.join(", ")} separated by commas`,
    );
  return parsed.services;
};

/** Environment variable names, comma-separated; gw's own (GW_…) are refused: the agent never gets them. */
export const envNameList: Parser<string[]> = (raw) => {
  const names = raw
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  const bad = names.find((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (bad !== undefined || names.length === 0)
    throw new SettingError(
      `has an entry that is not a variable name${bad ? ` (${bad})` : ""}`,
      "list names separated by commas, e.g. ANTHROPIC_API_KEY",
    );
  const own = names.find((n) => n.toUpperCase().startsWith("GW_"));
  if (own !== undefined)
    throw new SettingError(
      `lists ${own}`,
      "leave gw's own variables out: the agent gets what it needs through its MCP config",
    );
  return names;
};

/**
 * A program's own argument list: a JSON array of strings (`[]` for none), so no shell quoting is
 * involved and nothing else can be spliced in. Anything else is refused; a NUL byte cannot be in argv.
 */
export const jsonStringArray: Parser<string[]> = (raw) => {
  const fix = 'write the arguments as a JSON array of strings, e.g. ["run", "--quiet"], or [] for none';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new SettingError("is not JSON", fix);
  }
  if (!Array.isArray(parsed)) throw new SettingError("is not a JSON array", fix);
  const bad = parsed.findIndex((a) => typeof a !== "string");
  if (bad !== -1)
    throw new SettingError(
      `has an entry that is not a string (at ${bad}: ${JSON.stringify(parsed[bad])})`,
      fix,
    );
  if (parsed.some((a) => (a as string).includes("\0")))
    throw new SettingError("has an entry with a NUL byte", fix);
  return parsed as string[];
};

/** An ISO 3166 alpha-2 region that phone numbers can be read in (any case; returned in upper case). */
export const region: Parser<string> = (raw) => {
  const v = raw.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(v))
    throw new SettingError(
      "is not a two-letter region code",
      "use an ISO 3166 alpha-2 code such as US or GB",
    );
  if (!isSupportedCountry(v))
    throw new SettingError(
      "is not a region with a telephone numbering plan",
      "use the code of a country, e.g. US or GB",
    );
  return v;
};

/** The longest reaction emoji accepted (a Discord custom emoji `<a:name:id>` is at most 57 characters). */
export const MAX_EMOJI_CHARS = 64;

/** One reaction emoji as POST /messages/react takes it: Unicode, or Discord's `<:name:id>` / `<a:name:id>`. */
export const reactionEmoji: Parser<string> = (raw) => {
  const v = raw.trim();
  const fix = "use one Unicode emoji such as 👀, or a Discord custom emoji written <:name:id>";
  if (v.length > MAX_EMOJI_CHARS) throw new SettingError(`is longer than ${MAX_EMOJI_CHARS} characters`, fix);
  if (!isReactionEmoji(v)) throw new SettingError("is not one emoji", fix);
  return v;
};
