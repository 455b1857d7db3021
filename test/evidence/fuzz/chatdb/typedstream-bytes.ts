/**
 * The byte pieces of a typedstream attributedBody (the `streamtyped` header, an NSAttributedString root,
 * the run from there to the NSString's length field) that hostile blobs and bad rows are built from.
 */

import { concat, utf8 } from "../../../helpers/bytes.ts";

export { concat, utf8 };

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
