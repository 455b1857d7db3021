/**
 * A `message.attributedBody` with its attribute runs (chatdb.md §4.2, issue 30). The text is always exactly
 * `decodeAttributedBody`'s (null there means null here); the runs are the body's own, in order, covering the
 * text in UTF-16 units, with the three attributes gw uses. When the run section cannot be read (damaged,
 * overrunning, not covering the text), the text comes back as one run with null attributes. Never throws.
 */
import {
  type ArchivedObject,
  isKindOf,
  isObject,
  readTypedStream,
  type Value,
} from "./typedstream-reader.ts";
import { decodeAttributedBody } from "./typedstream-text.ts";

/** One attribute run: `[start, end)` in UTF-16 units of the body text, never empty. */
export interface BodyRun {
  start: number;
  end: number;
  /** `__kIMMessagePartAttributeName`: the message part (edited or unsent part by part) this range is in. */
  part: number | null;
  /** `__kIMFileTransferGUIDAttributeName`: the attachment a U+FFFC placeholder stands for. */
  fileTransferGuid: string | null;
  /** `IMAudioTranscription`: the transcript of a voice message, on its U+FFFC. */
  audioTranscription: string | null;
}

/** A body: its text and runs covering it exactly (none for ""). */
export interface Body {
  text: string;
  runs: BodyRun[];
}

export const PART_KEY = "__kIMMessagePartAttributeName";
export const FILE_TRANSFER_GUID_KEY = "__kIMFileTransferGUIDAttributeName";
export const AUDIO_TRANSCRIPTION_KEY = "IMAudioTranscription";

type Attributes = Omit<BodyRun, "start" | "end">;
type StringCache = Map<ArchivedObject, string | null>;

const NO_ATTRIBUTES: Attributes = { part: null, fileTransferGuid: null, audioTranscription: null };
const INTEGER_CTYPES = new Set(["c", "C", "s", "S", "i", "I", "l", "L", "q", "Q"]);
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body's text and attribute runs, or null when `decodeAttributedBody` finds no text. */
export function decodeBody(blob: Uint8Array | null | undefined): Body | null {
  const text = decodeAttributedBody(blob);
  if (text === null || !(blob instanceof Uint8Array)) return null;
  let runs: BodyRun[] | null = null;
  try {
    runs = readRuns(blob, text);
  } catch {
    runs = null; // belt and braces: the reader already turns every malformation into null
  }
  return { text, runs: runs ?? wholeText(text) };
}

function wholeText(text: string): BodyRun[] {
  return text === "" ? [] : [{ start: 0, end: text.length, ...NO_ATTRIBUTES }];
}

/**
 * The runs of an attributed string: after its string, `iI` pairs (dictionary number, length in UTF-16
 * units) until the text is covered; a number one past the dictionaries seen so far is followed by that
 * dictionary, a smaller one reuses an earlier dictionary. Null for anything else, including extra values.
 */
function readRuns(blob: Uint8Array, text: string): BodyRun[] | null {
  const root = readTypedStream(blob);
  if (root === null || !isKindOf(root, "NSAttributedString")) return null;
  const values = root.values;
  const strings: StringCache = new Map();
  if (stringOf(values[0], strings) !== text) return null;
  const dictionaries: Attributes[] = [];
  const runs: BodyRun[] = [];
  let at = 1;
  let start = 0;
  while (start < text.length) {
    const number = values[at];
    const length = values[at + 1];
    at += 2;
    if (!isInteger(number) || !isInteger(length)) return null;
    if (number === dictionaries.length + 1) {
      const attributes = attributesOf(values[at++], strings);
      if (attributes === null) return null;
      dictionaries.push(attributes);
    }
    const attributes = dictionaries[number - 1];
    if (attributes === undefined || length < 1 || start + length > text.length) return null;
    runs.push({ start, end: start + length, ...attributes });
    start += length;
  }
  return at === values.length ? runs : null;
}

/** The three attributes of an NSDictionary (`i` count, then key and value objects); others ignored. */
function attributesOf(value: Value | undefined, strings: StringCache): Attributes | null {
  if (!isObject(value) || !isKindOf(value, "NSDictionary")) return null;
  const [count, ...entries] = value.values;
  if (!isInteger(count) || entries.length !== 2 * count) return null;
  const out: Attributes = { ...NO_ATTRIBUTES };
  for (let i = 0; i < entries.length; i += 2) {
    const key = stringOf(entries[i], strings);
    const entry = entries[i + 1];
    if (key === PART_KEY) out.part = integerOf(entry);
    else if (key === FILE_TRANSFER_GUID_KEY) out.fileTransferGuid = stringOf(entry, strings);
    else if (key === AUDIO_TRANSCRIPTION_KEY) out.audioTranscription = stringOf(entry, strings);
  }
  return out;
}

/**
 * An NSString's (or NSMutableString's) text: its one `+` value, strict UTF-8. Decoded once per object, so
 * that back-references to a long string cost O(1) each.
 */
function stringOf(value: Value | undefined, strings: StringCache): string | null {
  if (!isObject(value)) return null;
  const known = strings.get(value);
  if (known !== undefined) return known;
  const bytes = value.values[0];
  let text: string | null = null;
  if (isKindOf(value, "NSString") && value.values.length === 1 && bytes instanceof Uint8Array) {
    try {
      text = UTF8.decode(bytes);
    } catch {
      text = null;
    }
  }
  strings.set(value, text);
  return text;
}

/** An NSNumber of an integer C type (NSValue's `*` type, then the value). */
function integerOf(value: Value | undefined): number | null {
  if (!isObject(value) || !isKindOf(value, "NSNumber")) return null;
  const [ctype, number] = value.values;
  if (
    value.values.length !== 2 ||
    typeof ctype !== "string" ||
    !INTEGER_CTYPES.has(ctype) ||
    !isInteger(number)
  )
    return null;
  return number;
}

function isInteger(value: Value | undefined): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}
