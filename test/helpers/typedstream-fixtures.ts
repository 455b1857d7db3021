/**
 * The real typedstream blobs of shared/fixtures/typedstream (GPL test data: read from there at test time,
 * never copied into this repository), their expected texts, the pieces the attributedBody tests build
 * blobs from (integers, the NSString length field's place in a blob our encoder made), and checks shared
 * by the body tests.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Body } from "../../src/connectors/device-messenger/typedstream.ts";

export const FIXTURE_DIR = join(import.meta.dir, "../../../shared/fixtures/typedstream");
export const HAVE_FIXTURES = existsSync(FIXTURE_DIR);
const NOT_BLOBS = new Set(["README.md", "expected.json"]);

export const FIXTURE_NAMES: string[] = HAVE_FIXTURES
  ? readdirSync(FIXTURE_DIR)
      .filter((n) => !NOT_BLOBS.has(n))
      .sort()
  : [];

export const EXPECTED: Record<string, string | null> = HAVE_FIXTURES
  ? JSON.parse(readFileSync(join(FIXTURE_DIR, "expected.json"), "utf8"))
  : {};

export const readFixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(join(FIXTURE_DIR, name)));

import { bytes, utf8 } from "./bytes.ts";

export { bytes, concat, utf8 } from "./bytes.ts";

export function indexOfBytes(haystack: Uint8Array, needle: ArrayLike<number>, from = 0): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** typedstream integer; `form` forces `81`/`82` where the value allows it. */
export function tsInt(n: number, form?: 0x81 | 0x82): Uint8Array {
  if (form === undefined && n < 0x80) return bytes(n);
  if (form !== 0x82 && n <= 0xffff) return bytes(0x81, n & 0xff, n >>> 8);
  return bytes(0x82, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
}

/** The `84 01 2B` type string ("+") right before the NSString's length field. */
export const TYPE_PLUS = [0x84, 0x01, 0x2b];

/** Where the NSString's length field starts and the body starts/ends in a blob our encoder made. */
export function layoutOf(blob: Uint8Array): { lengthAt: number; start: number; end: number } {
  const lengthAt = indexOfBytes(blob, TYPE_PLUS) + 3;
  const tag = blob[lengthAt] ?? 0;
  const size = tag < 0x80 ? 1 : tag === 0x81 ? 3 : 5;
  const field = blob.subarray(lengthAt + 1, lengthAt + size);
  const length = tag < 0x80 ? tag : field.reduce((acc, b, i) => acc + b * 2 ** (8 * i), 0);
  return { lengthAt, start: lengthAt + size, end: lengthAt + size + length };
}

/** A string of exactly `n` UTF-8 bytes made of `unit` plus ASCII padding. */
export function ofUtf8Length(n: number, unit: string): string {
  const unitBytes = utf8(unit).length;
  return unit.repeat(Math.floor(n / unitBytes)) + "x".repeat(n % unitBytes);
}

/**
 * What every decodeBody result must satisfy: null, or runs that cover the text in order without gaps, each
 * non-empty and inside it, with attributes of the right types. Returns the first problem, or null.
 */
export function bodyProblem(body: Body | null): string | null {
  if (body === null) return null;
  if (typeof body.text !== "string" || !Array.isArray(body.runs)) return "not a body";
  let at = 0;
  for (const r of body.runs) {
    if (r.start !== at) return `run starts at ${r.start}, expected ${at}`;
    if (!Number.isInteger(r.end) || r.end <= r.start || r.end > body.text.length) return `bad end ${r.end}`;
    if (r.part !== null && !Number.isSafeInteger(r.part)) return `bad part ${r.part}`;
    if (r.fileTransferGuid !== null && typeof r.fileTransferGuid !== "string") return "bad guid";
    if (r.audioTranscription !== null && typeof r.audioTranscription !== "string") return "bad transcript";
    at = r.end;
  }
  return at === body.text.length ? null : `runs end at ${at} of ${body.text.length}`;
}
