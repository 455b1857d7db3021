/**
 * The typedstream format's tag bytes (NSArchiver, chatdb.md §4.2), shared by the reader, the writer and
 * the text extractor so all three speak one format. Constants only.
 */

export const TAG_INT16 = 0x81;
export const TAG_INT32 = 0x82;
export const TAG_FLOAT = 0x83;
export const TAG_NEW = 0x84;
export const TAG_NIL = 0x85;
export const TAG_END = 0x86;
export const TAG_INT64 = 0x87;
/** Bytes 0x80..0x91 are tags; a reference number is the signed integer read minus this (0x92 → 0). */
export const FIRST_TAG = 0x80;
export const LAST_TAG = 0x91;
/** Reference numbers are written as signed integers biased so that table entry 0 is the byte 0x92. */
export const REFERENCE_BIAS = -110;
/** The stream's signature after its version byte(s). */
export const SIGNATURE = "streamtyped";
