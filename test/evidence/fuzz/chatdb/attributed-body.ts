/**
 * The `attributed-body` item: blobs through the typedstream decoder the connector uses (and rowText's path
 * over it), unmodified, truncated at every length (sampled over EVERY_LENGTH_UP_TO below scale 100), with
 * seeded byte changes, hostile lengths and nesting, and random bytes. Never a throw, a string or null
 * within 50 ms, the expected text when unmodified, and nothing after the body's closing 0x86 matters.
 */
import fc from "fast-check";
import { decodeAttributedBody } from "../../../../src/connectors/device-messenger/typedstream.ts";
import { checkProperty, type FuzzItem, merge, type Outcome, prng } from "../types.ts";
import { BLOB_DIR, blobCorpus, type Corpus, hostileBlobs, mutation } from "./blobs.ts";
import { decodeChecked, firstDecoding } from "./decode-check.ts";
import { failureLog } from "./failure-log.ts";
import { concat, HEADER, ROOT, TO_LENGTH } from "./typedstream-bytes.ts";

/** Blobs up to this size are truncated at every length even at scale 1. */
const EVERY_LENGTH_UP_TO = 4096;

/** What the checks of one run share: where failures go, the slowest decode, the seeded random, the scale. */
type Checks = {
  fail: (f: string) => void;
  failures: () => string[];
  slowest: { ms: number };
  random: () => number;
  scale: number;
};

/** The checks' state for one run: its failure log, the slowest decode so far, a random source from `seed`. */
function newChecks(seed: number, scale: number): Checks {
  const log = failureLog();
  return { fail: log.add, failures: log.done, slowest: { ms: 0 }, random: prng(seed), scale };
}

/** One blob unmodified, (a) truncated and (b) changed; returns the cases tried. */
function tryBlob(blob: Corpus[number], { fail, slowest, random, scale }: Checks): number {
  let cases = 0;
  const { name, bytes, expected } = blob;
  cases++;
  if (decodeChecked(bytes, () => `${name} unmodified`, fail, slowest) !== expected)
    fail(`${name}: unmodified blob does not decode to ${JSON.stringify(expected)?.slice(0, 80)}`);
  const first = firstDecoding(bytes);
  if (expected !== null && (first < 1 || bytes[first - 1] !== 0x86))
    fail(`${name}: the shortest decoding prefix (${first}) does not end at the body's closing 0x86`);

  // (a) truncations: every length, or a sample of them plus the ones around the boundary.
  const every = bytes.length <= EVERY_LENGTH_UP_TO || scale >= 100;
  const lengths = every
    ? Array.from({ length: bytes.length + 1 }, (_, n) => n)
    : [
        ...Array.from({ length: 65 }, (_, n) => n),
        ...Array.from({ length: 500 * scale }, () => Math.floor(random() * (bytes.length + 1))),
        ...[first - 2, first - 1, first, first + 1, bytes.length - 1, bytes.length],
      ].filter((n) => n >= 0 && n <= bytes.length);
  for (const n of lengths) {
    cases++;
    const got = decodeChecked(bytes.subarray(0, n), () => `${name} cut at ${n}`, fail, slowest);
    const want = first >= 0 && n >= first ? expected : null;
    if (got !== undefined && got !== want)
      fail(`${name} cut at ${n}: ${JSON.stringify(got)?.slice(0, 80)} (the body closes at ${first})`);
  }

  // (b) mutations: anything may come out, except after the body's closing byte.
  for (let i = 0; i < 60 * scale; i++) {
    const m = mutation(random, bytes.length);
    cases++;
    const got = decodeChecked(m.apply(bytes), () => `${name} with ${m.kind}`, fail, slowest);
    if (got !== undefined && first >= 0 && m.at >= first && got !== expected)
      fail(`${name} with ${m.kind} (after the closing 0x86 at ${first - 1}): ${JSON.stringify(got)}`);
  }
  return cases;
}

/** (d) hostile lengths and nesting; returns the cases tried. */
function tryHostile({ fail, slowest }: Checks): number {
  let cases = 0;
  for (const h of hostileBlobs()) {
    cases++;
    const got = decodeChecked(h.bytes, () => h.name, fail, slowest);
    if (got !== undefined && got !== h.expected)
      fail(
        `${h.name}: ${JSON.stringify(got)?.slice(0, 80)}, expected ${JSON.stringify(h.expected)?.slice(0, 80)}`,
      );
  }
  return cases;
}

/** (c) random bytes, bare and behind the structure the decoder looks for. */
function tryRandom(slowest: { ms: number }, scale: number, seed: number): Promise<Outcome> {
  const tail = fc.oneof(fc.uint8Array({ maxLength: 2048 }), fc.uint8Array({ maxLength: 2048, size: "max" }));
  const randomBlob = fc.oneof(
    tail,
    tail.map((t) => concat(HEADER, t)),
    tail.map((t) => concat(HEADER, ROOT, t)),
    tail.map((t) => concat(HEADER, ROOT, TO_LENGTH, t)),
    tail.map((t) => concat(Uint8Array.of(0xff, 0xfe), t)),
  );
  return checkProperty(
    fc.property(randomBlob, (bytes) => {
      const problems: string[] = [];
      const got = decodeChecked(
        bytes,
        () => "random blob",
        (f) => problems.push(f),
        slowest,
      );
      if (got !== undefined && decodeAttributedBody(bytes) !== got) problems.push("not deterministic");
      if (problems.length > 0) throw new Error(problems.join("; "));
    }),
    1000 * scale,
    seed,
  );
}

export const attributedBody: FuzzItem = {
  id: "attributed-body",
  tried:
    "message.attributedBody blobs through the decoder the connector uses: the 41 real blobs of shared/fixtures/typedstream and 6 synthetic encodings (up to 36 KB), each truncated at every length (the two over 4 KiB at about 570 lengths at scale 1) and changed 60 times (a byte set, a bit flipped, bytes inserted, deleted or duplicated, a 0xff run), 1,000 random blobs up to 2 KiB (fast-check; bare, behind a valid header, root or length position, after FF FE), and 20 hostile blobs (length prefixes up to 2^32, float and 8-byte tags, a length field cut off, 10,000 nested roots, 1 MiB of 0x84 or of near-miss class names, a 1 MiB body)",
  held: "never throws, returns a string or null (rowText's path the same, placeholders dropped), no blob over 50 ms, unmodified blobs decode to their expected text, a prefix decodes only once it holds the body's closing 0x86 and then to the full text, changes after that byte never change the result",
  async run({ scale, seed }): Promise<Outcome> {
    const checks = newChecks(seed, scale);
    let cases = 0;
    const { blobs, real } = blobCorpus();
    const notes: string[] = [];
    if (real === 0) notes.push(`${BLOB_DIR} not found: only the synthetic blobs were tried`);
    for (const blob of blobs) cases += tryBlob(blob, checks);
    cases += tryHostile(checks);
    const property = await tryRandom(checks.slowest, scale, seed);
    notes.push(`slowest decode ${checks.slowest.ms.toFixed(2)} ms`);
    return merge({ cases, failures: checks.failures(), notes }, property);
  },
};
