/**
 * The real typedstream blobs of shared/fixtures/typedstream (GPL test data: read from there at test time,
 * never copied into this repository), their expected texts, and checks shared by the body tests.
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

export const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function indexOfBytes(haystack: Uint8Array, needle: ArrayLike<number>, from = 0): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
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
