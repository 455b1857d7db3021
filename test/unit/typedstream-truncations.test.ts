/**
 * decodeAttributedBody on every prefix and 200 seeded single-bit flips of each real fixture and of encoded
 * bodies up to 70,000 bytes: it never throws, a prefix decodes only once it holds the body's closing 86
 * (and then to the full text), and a flip after that byte changes nothing.
 */
import { describe, expect, test } from "bun:test";
import { mulberry32 } from "../../bench/lib/stats.ts";
import {
  decodeAttributedBody,
  encodeAttributedBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { EXPECTED, FIXTURE_NAMES, ofUtf8Length, readFixture, utf8 } from "../helpers/typedstream-fixtures.ts";

/** mulberry32: small deterministic PRNG for the fuzz cases (the benchmarks' seeded generator). */
const prng = mulberry32;

describe("fuzz: truncations and bit flips never throw", () => {
  const cases: Array<[string, () => Uint8Array, string | null]> = [
    ...FIXTURE_NAMES.map((name): [string, () => Uint8Array, string | null] => [
      `fixture ${name}`,
      () => readFixture(name),
      EXPECTED[name] ?? null,
    ]),
    ...["", "熄灭了 ↄ 🆄 👍🏽", "x".repeat(300), ofUtf8Length(32_768, "熄"), ofUtf8Length(70_000, "🆄")].map(
      (text): [string, () => Uint8Array, string | null] => [
        `encoded ${utf8(text).length}-byte body`,
        () => encodeAttributedBody(text),
        text,
      ],
    ),
  ];

  for (const [label, load, expected] of cases) {
    test(label, () => {
      const blob = load();
      expect(decodeAttributedBody(blob)).toBe(expected);

      // Every prefix: null until the body's closing 86 is included, then the full text.
      let firstDecoded = -1;
      for (let n = 0; n <= blob.length; n++) {
        const got = decodeAttributedBody(blob.subarray(0, n));
        if (firstDecoded < 0 && got !== null) firstDecoded = n;
        if (firstDecoded < 0) expect(got).toBeNull();
        else if (got !== expected) expect(got).toBe(expected);
      }
      if (expected !== null) expect(blob[firstDecoded - 1]).toBe(0x86);
      else expect(firstDecoded).toBe(-1);

      // Single-bit flips: a string or null; after the body's closing 86 they cannot matter.
      const random = prng(blob.length * 2654435761);
      for (let i = 0; i < 200; i++) {
        const at = Math.floor(random() * blob.length);
        const mutated = blob.slice();
        mutated[at] = (mutated[at] ?? 0) ^ (1 << Math.floor(random() * 8));
        const got = decodeAttributedBody(mutated);
        if (got !== null && typeof got !== "string") expect(typeof got).toBe("string");
        if (expected !== null && at >= firstDecoded && got !== expected) expect(got).toBe(expected);
      }
    });
  }
});
