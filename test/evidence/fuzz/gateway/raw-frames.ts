/**
 * Raw gateway frames outside the protocol (`sendRaw`): unknown op codes, op 0 with an odd t, real messages
 * re-sent with odd sequences, non-JSON, truncated, binary, 1–8 MiB and 10k–200k-deep frames. `rawSpec`
 * generates them, `sendRawSpec` sends one (returning the real messages it carried, to be stored once),
 * and NAMED_RAW is each kind once, sent before the random batches.
 */
import fc from "fast-check";
import { nastyString } from "../arbitraries.ts";
import { baseMessage } from "./messages.ts";
import type { Run, World } from "./run.ts";
import { ABSENT, hugeText, type Json, junk, MIB, nest, snowflake } from "./values.ts";

export type RawSpec =
  | { kind: "unknown-op"; op: unknown; d: unknown; s: unknown }
  | { kind: "op0-odd-t"; t: unknown; s: unknown; d: unknown }
  | { kind: "odd-s"; s: unknown[] }
  | { kind: "text"; text: string }
  | { kind: "truncated"; at: number }
  | { kind: "binary"; bytes: Uint8Array }
  | { kind: "binary-json" }
  | { kind: "huge"; mib: number; as: "message" | "text" | "binary" }
  | { kind: "deep"; depth: number; as: "embeds" | "d" | "frame" };

const KNOWN_OPS = [0, 1, 7, 9, 10, 11];
const oddSequence = fc.oneof(
  fc.constantFrom<unknown>(0, -1, 1, 2, "7", "abc", null, {}, [], true, 1e300, 2 ** 63, 1.5, ABSENT),
  fc.integer(),
);

export function rawSpec(): fc.Arbitrary<RawSpec> {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), junk);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("unknown-op" as const),
        op: fc.oneof(
          fc.integer().filter((n) => !KNOWN_OPS.includes(n)),
          fc.constantFrom<unknown>(2, 3, 4, 6, 8, 12, "0", "10", null, 1.5, true, {}, [], ABSENT),
          fc.constantFrom(1, 11),
        ),
        d: value,
        s: oddSequence,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("op0-odd-t" as const),
        t: fc.oneof(fc.constantFrom<unknown>(ABSENT, null, 5, {}, [], "", "__proto__", "NOPE"), nastyString),
        s: oddSequence,
        d: value,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("odd-s" as const),
        s: fc.array(oddSequence, { minLength: 1, maxLength: 2 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("text" as const),
        text: fc.oneof(
          nastyString,
          fc.constantFrom("", "null", "0", "true", '"op"', "[]", "[null]", "{}", '{"op":0', "{op:11}"),
          fc.constantFrom(
            '{"op":11}}',
            '{"op":NaN}',
            '\uFEFF{"op":11}',
            '{"op":0,"t":"MESSAGE_CREATE","d":null}',
          ),
        ),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("truncated" as const), at: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("binary" as const),
        bytes: fc.uint8Array({ maxLength: 2048 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("binary-json" as const) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("deep" as const),
        depth: fc.integer({ min: 10_000, max: 200_000 }),
        as: fc.constantFrom("embeds" as const, "d" as const, "frame" as const),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("huge" as const),
        mib: fc.integer({ min: 1, max: 8 }),
        as: fc.constantFrom("message" as const, "text" as const, "binary" as const),
      }),
    },
  );
}

const frameText = (op: unknown, t: unknown, s: unknown, d: unknown) => {
  const f: Json = { op, t, s, d };
  for (const k of Object.keys(f)) if (f[k] === ABSENT) delete f[k];
  return JSON.stringify(f);
};

/** Sends one raw spec; returns the ids of real messages it carried, which must be stored once. */
export function sendRawSpec(w: World, run: Run, spec: RawSpec, n: number): string[] {
  const hostileMessage = () => baseMessage(w, snowflake(Date.now() - 86_400_000, n), "general", "mallory");
  switch (spec.kind) {
    case "unknown-op":
      run.send({ raw: frameText(spec.op, ABSENT, spec.s, spec.d) });
      return [];
    case "op0-odd-t":
      run.send({ raw: frameText(0, spec.t, spec.s, spec.d) });
      return [];
    case "odd-s": {
      const p = run.post(w.general.id, w.friend, `raw odd-s #${n}`, false);
      for (const s of spec.s) run.send({ raw: frameText(0, "MESSAGE_CREATE", s, p) });
      return [p.id as string];
    }
    case "text":
      run.send({ raw: spec.text });
      return [];
    case "truncated": {
      const d = hostileMessage();
      const text = frameText(0, "MESSAGE_CREATE", 1, d);
      run.send({ raw: text.slice(0, 1 + (spec.at % text.length)), carries: d });
      return [];
    }
    case "binary":
      run.send({ raw: spec.bytes });
      return [];
    case "binary-json": {
      const d = hostileMessage();
      run.send({ raw: new TextEncoder().encode(frameText(0, "MESSAGE_CREATE", 1, d)), carries: d });
      return [];
    }
    case "deep": {
      const deep = nest(spec.depth);
      if (spec.as === "frame") run.send({ raw: deep });
      else if (spec.as === "d") run.send({ raw: `{"op":0,"t":"MESSAGE_CREATE","s":1,"d":${deep}}` });
      else {
        const d = hostileMessage();
        const text = frameText(0, "MESSAGE_CREATE", 1, d);
        run.send({ raw: `${text.slice(0, -2)},"embeds":${deep}}}`, carries: d });
      }
      return [];
    }
    case "huge": {
      const size = spec.mib * MIB;
      if (spec.as === "binary") run.send({ raw: new Uint8Array(size).fill(0x7b) });
      else if (spec.as === "text") run.send({ raw: `{"op":0,"t":"MESSAGE_CREATE","d":"${"x".repeat(size)}` });
      else {
        // The stranger's: quarantined, so the unread polls of every later batch do not carry it.
        const p = run.post(w.thread.id, w.stranger, hugeText(size), false);
        run.send({ raw: frameText(0, "MESSAGE_CREATE", 2, p) });
        return [p.id as string];
      }
      return [];
    }
  }
}

export const NAMED_RAW: [string, RawSpec][] = [
  ["unknown op 99", { kind: "unknown-op", op: 99, d: {}, s: ABSENT }],
  ['op "0" (a string)', { kind: "unknown-op", op: "0", d: { a: 1 }, s: 3 }],
  ["no op", { kind: "unknown-op", op: ABSENT, d: null, s: ABSENT }],
  ["op 11 with junk", { kind: "unknown-op", op: 11, d: "x", s: "y" }],
  ["op 0 without t", { kind: "op0-odd-t", t: ABSENT, s: 5, d: {} }],
  ["op 0 with t a number", { kind: "op0-odd-t", t: 5, s: 6, d: null }],
  ["s backwards", { kind: "odd-s", s: [0, -1] }],
  ["s not a number", { kind: "odd-s", s: ["abc", null] }],
  ["s huge", { kind: "odd-s", s: [1e300] }],
  ["non-JSON text", { kind: "text", text: "{not json" }],
  ["empty text", { kind: "text", text: "" }],
  ["JSON null", { kind: "text", text: "null" }],
  ["a truncated dispatch", { kind: "truncated", at: 40 }],
  ["binary bytes", { kind: "binary", bytes: new Uint8Array([0, 1, 2, 0xff]) }],
  ["a dispatch as a binary frame", { kind: "binary-json" }],
  ["8 MiB message", { kind: "huge", mib: 8, as: "message" }],
  ["1 MiB of non-JSON", { kind: "huge", mib: 1, as: "text" }],
  ["2 MiB binary", { kind: "huge", mib: 2, as: "binary" }],
  ["a frame nested 100k deep", { kind: "deep", depth: 100_000, as: "frame" }],
  ["d nested 100k deep", { kind: "deep", depth: 100_000, as: "d" }],
  ["embeds nested 60k deep", { kind: "deep", depth: 60_000, as: "embeds" }],
];
