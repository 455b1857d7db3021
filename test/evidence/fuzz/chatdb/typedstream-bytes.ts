/**
 * The byte pieces of a typedstream attributedBody (the `streamtyped` header, an NSAttributedString root,
 * the run from there to the NSString's length field) that hostile blobs and bad rows are built from.
 */

export const utf8 = (s: string) => new TextEncoder().encode(s);

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const HEADER = concat(Uint8Array.of(0x04, 0x0b), utf8("streamtyped"), Uint8Array.of(0x81, 0xe8, 0x03));
export const ROOT = concat(
  Uint8Array.of(0x84, 0x01, 0x40, 0x84, 0x84, 0x84, 0x12),
  utf8("NSAttributedString"),
);
export const TO_LENGTH = concat(
  Uint8Array.of(0x00, 0x84, 0x84, 0x08),
  utf8("NSObject"),
  Uint8Array.of(0x00, 0x85, 0x92, 0x84, 0x84, 0x84, 0x08),
  utf8("NSString"),
  Uint8Array.of(0x01, 0x94, 0x84, 0x01, 0x2b),
);
