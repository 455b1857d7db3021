/**
 * The decoder's contract for one blob: `decodeChecked` decodes as the connector does and reports a throw,
 * a result not a string or null, rowText's path disagreeing (placeholders as the connector treats them, `strip`), or a decode
 * over SLOW_MS (its best of three timings). `firstDecoding` finds the shortest prefix that decodes.
 */
import { bodyText, visibleText } from "../../../../src/connectors/device-messenger/rows.ts";
import { decodeAttributedBody } from "../../../../src/connectors/device-messenger/typedstream.ts";

/** A decode slower than this (its best of three timings) is a failure. */
const SLOW_MS = 50;

/** What a row's text is made of a decoded body: the connector's own rule (placeholders to line breaks). */
export const strip = visibleText;

/** Decodes `bytes` as the connector does, checking the contract; returns the result or undefined. */
export function decodeChecked(
  bytes: Uint8Array,
  what: () => string,
  fail: (f: string) => void,
  max: { ms: number },
) {
  let got: string | null;
  let ms: number;
  try {
    const t0 = performance.now();
    got = decodeAttributedBody(bytes);
    ms = performance.now() - t0;
    if (ms > SLOW_MS) {
      // Retimed: a garbage-collection pause or a busy core is not the decoder being slow.
      for (let i = 0; i < 2; i++) {
        const t1 = performance.now();
        decodeAttributedBody(bytes);
        ms = Math.min(ms, performance.now() - t1);
      }
    }
    const viaRow = bodyText({ text: null, body: bytes });
    if (viaRow !== (got === null ? null : strip(got)))
      fail(`${what()}: rowText's path gave ${JSON.stringify(viaRow)}, the decoder ${JSON.stringify(got)}`);
  } catch (err) {
    fail(`${what()}: threw ${String(err)}`);
    return undefined;
  }
  max.ms = Math.max(max.ms, ms);
  if (ms > SLOW_MS) fail(`${what()}: ${ms.toFixed(1)} ms for ${bytes.length} bytes`);
  if (got !== null && typeof got !== "string") fail(`${what()}: returned ${typeof got}`);
  return got;
}

/** The smallest prefix length that decodes (decoding is monotone in the prefix length), or -1. */
export function firstDecoding(bytes: Uint8Array): number {
  if (decodeAttributedBody(bytes) === null) return -1;
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (decodeAttributedBody(bytes.subarray(0, mid)) === null) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
