/**
 * The attributedBody blobs tried: every real blob of shared/fixtures/typedstream (read in place, never
 * copied) with its expected text plus synthetic encodings (`blobCorpus`), hostile lengths and nesting
 * with what each must decode to (`hostileBlobs`), and seeded byte changes to a blob (`mutation`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { encodeAttributedBody } from "../../../../src/connectors/device-messenger/typedstream.ts";
import { concat, HEADER, ROOT, TO_LENGTH, utf8 } from "./typedstream-bytes.ts";

export const BLOB_DIR = join(import.meta.dir, "../../../../../shared/fixtures/typedstream");

export type Corpus = { name: string; bytes: Uint8Array; expected: string | null }[];

export function blobCorpus(): { blobs: Corpus; real: number } {
  const blobs: Corpus = [];
  if (existsSync(BLOB_DIR)) {
    const expected = JSON.parse(readFileSync(join(BLOB_DIR, "expected.json"), "utf8")) as Record<
      string,
      string | null
    >;
    for (const name of readdirSync(BLOB_DIR).sort()) {
      if (name === "README.md" || name === "expected.json") continue;
      const bytes = new Uint8Array(readFileSync(join(BLOB_DIR, name)));
      blobs.push({ name, bytes, expected: expected[name] ?? null });
    }
  }
  const real = blobs.length;
  const texts = ["", "a", "熄灭了 ↄ 🆄 👍🏽", "\ufffcphoto", "x".repeat(300), "熄".repeat(12_000)];
  for (const text of texts)
    blobs.push({
      name: `encoded ${utf8(text).length}-byte body`,
      bytes: encodeAttributedBody(text),
      expected: text,
    });
  return { blobs, real };
}

/** Hostile blobs and what each must decode to. */
export function hostileBlobs(): { name: string; bytes: Uint8Array; expected: string | null }[] {
  const prefix = concat(HEADER, ROOT, TO_LENGTH);
  const body = utf8("hello");
  const withLength = (name: string, field: number[], expected: string | null = null) => ({
    name,
    bytes: concat(prefix, Uint8Array.from(field), body, Uint8Array.of(0x86, 0x86)),
    expected,
  });
  const mib = 1 << 20;
  const big = "熄".repeat(mib / 3);
  return [
    withLength("length 0x7f past the end", [0x7f]),
    withLength("length 81 ffff", [0x81, 0xff, 0xff]),
    withLength("length 82 ffffffff", [0x82, 0xff, 0xff, 0xff, 0xff]),
    withLength("length 82 2^31", [0x82, 0x00, 0x00, 0x00, 0x80]),
    withLength("length 82 with 5 (control)", [0x82, 0x05, 0x00, 0x00, 0x00], "hello"),
    withLength("length one short", [0x04]),
    withLength("length one long", [0x06]),
    withLength("length reaching the last byte", [0x07]),
    withLength("length reaching one past the end", [0x08]),
    withLength("length tag 83 (float)", [0x83, 0, 0, 0, 0]),
    withLength("length tag 87 (8 bytes)", [0x87, 5, 0, 0, 0, 0, 0, 0, 0]),
    withLength("length field cut off", [0x82, 0x05]),
    {
      name: "10,000 nested attributed strings",
      bytes: concat(HEADER, ...Array.from({ length: 10_000 }, () => ROOT), TO_LENGTH, Uint8Array.of(5), body),
      expected: null,
    },
    { name: "1 MiB of 0x84", bytes: concat(HEADER, new Uint8Array(mib).fill(0x84)), expected: null },
    {
      name: "1 MiB of near-miss NSStrin",
      bytes: concat(HEADER, ROOT, ...Array.from({ length: mib / 7 }, () => utf8("NSStrin"))),
      expected: null,
    },
    {
      name: "1 MiB of NSString without a type string",
      bytes: concat(HEADER, ROOT, ...Array.from({ length: mib / 8 }, () => utf8("NSString"))),
      expected: null,
    },
    { name: "1 MiB valid body (control)", bytes: encodeAttributedBody(big), expected: big },
    {
      name: "FF FE then 1 MiB of UTF-16LE",
      bytes: concat(Uint8Array.of(0xff, 0xfe), new Uint8Array(mib)),
      expected: "\0".repeat(mib / 2),
    },
    { name: "empty", bytes: new Uint8Array(0), expected: null },
    { name: "header only", bytes: HEADER, expected: null },
  ];
}

type Mutation = { kind: string; at: number; apply: (b: Uint8Array) => Uint8Array };

export function mutation(random: () => number, length: number): Mutation {
  const int = (n: number) => Math.floor(random() * n);
  const at = int(Math.max(1, length));
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256));
  switch (int(6)) {
    case 0: {
      const v = int(256);
      return { kind: `byte ${at} = ${v}`, at, apply: (b) => b.with(at, v) };
    }
    case 1: {
      const bit = int(8);
      return { kind: `bit ${bit} of byte ${at}`, at, apply: (b) => b.with(at, (b[at] ?? 0) ^ (1 << bit)) };
    }
    case 2: {
      const ins = bytes(1 + int(8));
      return {
        kind: `insert ${ins.length} at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at), ins, b.subarray(at)),
      };
    }
    case 3: {
      const n = 1 + int(16);
      return {
        kind: `delete ${n} at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at), b.subarray(at + n)),
      };
    }
    case 4: {
      const n = 1 + int(32);
      return {
        kind: `duplicate ${n} at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at + n), b.subarray(at)),
      };
    }
    default: {
      const n = 1 + int(4);
      return {
        kind: `${n} bytes of 0xff at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at), new Uint8Array(n).fill(0xff), b.subarray(at + n)),
      };
    }
  }
}
