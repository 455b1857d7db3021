/**
 * Writes `message.attributedBody` blobs in the layout Messages stores (chatdb.md §4.2): an NSAttributedString
 * whose NSString holds the UTF-8 text, then one `iI` run per attribute run with its NSDictionary, written the
 * first time and reused by number after; classes, key strings and equal NSNumbers are back-references.
 * Pure. decodeBody(encodeBody(b)) deep-equals b for every valid body; invalid input throws RangeError.
 */
import {
  AUDIO_TRANSCRIPTION_KEY,
  type Body,
  type BodyRun,
  FILE_TRANSFER_GUID_KEY,
  PART_KEY,
} from "./typedstream-body.ts";
import {
  REFERENCE_BIAS,
  SIGNATURE,
  TAG_END,
  TAG_INT16,
  TAG_INT32,
  TAG_NEW,
  TAG_NIL,
} from "./typedstream-tags.ts";

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Minimal typedstream writer with the shared string table and the object table references point into. */
class TypedStreamWriter {
  private readonly parts: Uint8Array[] = [];
  private readonly strings = new Map<string, number>();
  /** Object table entries that may be written again as references, by a caller-chosen identity. */
  private readonly shared = new Map<string, number>();
  private objectCount = 0;

  raw(...bytes: number[]): void {
    this.parts.push(Uint8Array.from(bytes));
  }

  /** Unsigned: < 0x80 one byte; else `81` + u16 LE up to 0xFFFF; else `82` + u32 LE. */
  int(value: number): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
      throw new RangeError(`typedstream integer out of range: ${value}`);
    }
    if (value < 0x80) this.raw(value);
    else if (value <= 0xffff) this.raw(TAG_INT16, value & 0xff, value >>> 8);
    else this.raw(TAG_INT32, value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24);
  }

  /** Signed: -110..127 one byte (two's complement; 0x80..0x91 are tags); else `81` + i16; else `82` + i32. */
  signed(value: number): void {
    if (!Number.isInteger(value) || value < INT32_MIN || value > INT32_MAX) {
      throw new RangeError(`typedstream integer out of range: ${value}`);
    }
    if (value >= REFERENCE_BIAS && value <= 0x7f) this.raw(value & 0xff);
    else if (value >= -0x8000 && value <= 0x7fff) this.raw(TAG_INT16, value & 0xff, (value >> 8) & 0xff);
    else this.raw(TAG_INT32, value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, (value >>> 24) & 0xff);
  }

  /** Length-prefixed bytes with no table entry (the header string, `+` values). */
  bytes(data: Uint8Array): void {
    this.int(data.length);
    this.parts.push(data);
  }

  /** A shared string (type encodings, class names): new `84` + bytes the first time, then a reference. */
  sharedString(value: string): void {
    const index = this.strings.get(value);
    if (index !== undefined) {
      this.signed(index + REFERENCE_BIAS);
      return;
    }
    this.strings.set(value, this.strings.size);
    this.raw(TAG_NEW);
    this.bytes(ascii(value));
  }

  /** A C string (`*` value): new `84` + shared string the first time (an object table entry), then a reference. */
  cString(value: string): void {
    if (this.reuse(`cstring:${value}`)) return;
    this.raw(TAG_NEW);
    this.share(`cstring:${value}`);
    this.sharedString(value);
  }

  /** Writes a reference to the entry registered as `identity`, if any; true when it did. */
  reuse(identity: string): boolean {
    const index = this.shared.get(identity);
    if (index === undefined) return false;
    this.signed(index + REFERENCE_BIAS);
    return true;
  }

  /** New object of the class chain `[name, version]…` (most derived first); classes seen before are referenced. */
  beginObject(chain: ReadonlyArray<readonly [string, number]>, identity?: string): void {
    this.raw(TAG_NEW);
    if (identity !== undefined) this.share(identity);
    else this.objectCount++;
    for (const [name, version] of chain) {
      if (this.reuse(`class:${name}`)) return;
      this.raw(TAG_NEW);
      this.share(`class:${name}`);
      this.sharedString(name);
      this.int(version);
    }
    this.raw(TAG_NIL);
  }

  endObject(): void {
    this.raw(TAG_END);
  }

  finish(): Uint8Array {
    const total = this.parts.reduce((sum, part) => sum + part.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  private share(identity: string): void {
    this.shared.set(identity, this.objectCount++);
  }
}

const NS_OBJECT = ["NSObject", 0] as const;
const NS_STRING = [["NSString", 1], NS_OBJECT] as const;
const NS_NUMBER = [["NSNumber", 0], ["NSValue", 0], NS_OBJECT] as const;
const NS_DICTIONARY = [["NSDictionary", 0], NS_OBJECT] as const;

/** An NSString object; `shared` ones (keys, values) are written once and referenced after. */
function writeString(w: TypedStreamWriter, value: string, shared: boolean): void {
  w.sharedString("@");
  if (shared && w.reuse(`string:${value}`)) return;
  w.beginObject(NS_STRING, shared ? `string:${value}` : undefined);
  w.sharedString("+");
  w.bytes(new TextEncoder().encode(value));
  w.endObject();
}

/** An NSNumber of C type `i`, shared by value as Messages' tagged numbers are. */
function writeInteger(w: TypedStreamWriter, value: number): void {
  w.sharedString("@");
  if (w.reuse(`number:${value}`)) return;
  w.beginObject(NS_NUMBER, `number:${value}`);
  w.sharedString("*");
  w.cString("i"); // NSValue's objCType
  w.sharedString("i");
  w.signed(value);
  w.endObject();
}

/** A run's NSDictionary, keys in Messages' order: file transfer GUID, transcription, message part. */
function writeDictionary(w: TypedStreamWriter, run: BodyRun): void {
  const entries: Array<[string, () => void]> = [];
  const { part, fileTransferGuid: guid, audioTranscription: transcript } = run;
  if (guid !== null) entries.push([FILE_TRANSFER_GUID_KEY, () => writeString(w, guid, true)]);
  if (transcript !== null) entries.push([AUDIO_TRANSCRIPTION_KEY, () => writeString(w, transcript, true)]);
  if (part !== null) entries.push([PART_KEY, () => writeInteger(w, part)]);
  w.sharedString("@");
  w.beginObject(NS_DICTIONARY);
  w.sharedString("i");
  w.signed(entries.length);
  for (const [key, writeValue] of entries) {
    writeString(w, key, true);
    writeValue();
  }
  w.endObject();
}

const attributesKey = (r: BodyRun): string =>
  JSON.stringify([r.part, r.fileTransferGuid, r.audioTranscription]);

/** Runs checked to cover `text` exactly, with neighbours of equal attributes merged (as NSAttributedString does). */
function normalisedRuns(body: Body): BodyRun[] {
  const { text, runs } = body;
  if (!text.isWellFormed()) throw new RangeError("text contains lone surrogates");
  const out: BodyRun[] = [];
  let at = 0;
  for (const run of runs) {
    if (run.start !== at || !Number.isInteger(run.end) || run.end <= run.start || run.end > text.length) {
      throw new RangeError(`runs must cover the text in order without gaps or empty runs (at ${at})`);
    }
    if (run.part !== null && (!Number.isInteger(run.part) || run.part < INT32_MIN || run.part > INT32_MAX)) {
      throw new RangeError(`part must be a 32-bit integer: ${run.part}`);
    }
    for (const s of [run.fileTransferGuid, run.audioTranscription]) {
      if (s !== null && !s.isWellFormed()) throw new RangeError("attribute contains lone surrogates");
    }
    const last = out.at(-1);
    if (last !== undefined && attributesKey(last) === attributesKey(run)) last.end = run.end;
    else out.push({ ...run });
    at = run.end;
  }
  if (at !== text.length) throw new RangeError(`runs end at ${at}, the text at ${text.length}`);
  return out;
}

/**
 * A synthetic `attributedBody` for `body`: its text, then its runs with their attributes (a run whose
 * attributes are all null gets an empty dictionary). Throws RangeError for runs that do not cover the text
 * exactly, parts outside 32 bits, or lone surrogates (no UTF-8 form, so no round trip).
 */
export function encodeBody(body: Body): Uint8Array {
  const runs = normalisedRuns(body);
  const w = new TypedStreamWriter();
  // Header: streamer version 4, signature, system version 1000 (`81 E8 03`).
  w.int(4);
  w.bytes(ascii(SIGNATURE));
  w.int(1000);

  w.sharedString("@");
  w.beginObject([["NSAttributedString", 0], NS_OBJECT]);
  writeString(w, body.text, false);
  const numbers = new Map<string, number>();
  for (const run of runs) {
    const key = attributesKey(run);
    const known = numbers.get(key);
    w.sharedString("iI");
    w.signed(known ?? numbers.size + 1);
    w.int(run.end - run.start);
    if (known !== undefined) continue;
    numbers.set(key, numbers.size + 1);
    writeDictionary(w, run);
  }
  w.endObject(); // root
  return w.finish();
}

/**
 * The layout Messages writes for a plain one-part message: one run covering all UTF-16 units with
 * `{ __kIMMessagePartAttributeName: 0 }` (no run and no dictionary for ""). Throws RangeError for a string
 * with lone surrogates, which has no UTF-8 form and so could not round-trip.
 */
export function encodeAttributedBody(text: string): Uint8Array {
  const run = { start: 0, end: text.length, part: 0, fileTransferGuid: null, audioTranscription: null };
  return encodeBody({ text, runs: text === "" ? [] : [run] });
}

/** One piece of a body to compose: its text (empty pieces are dropped) and its attributes. */
export interface BodyPiece {
  text: string;
  part?: number | null;
  fileTransferGuid?: string | null;
  audioTranscription?: string | null;
}

/** A body from pieces in order, e.g. `[{ text: "hi", part: 0 }, { text: "\uFFFC", part: 1, fileTransferGuid }]`. */
export function composeBody(pieces: readonly BodyPiece[]): Body {
  let text = "";
  const runs: BodyRun[] = [];
  for (const piece of pieces) {
    if (piece.text === "") continue;
    runs.push({
      start: text.length,
      end: text.length + piece.text.length,
      part: piece.part ?? null,
      fileTransferGuid: piece.fileTransferGuid ?? null,
      audioTranscription: piece.audioTranscription ?? null,
    });
    text += piece.text;
  }
  return { text, runs };
}
