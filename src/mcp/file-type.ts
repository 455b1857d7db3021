/**
 * What a downloaded attachment is, from its first bytes (pure): PNG, JPEG, GIF, WebP, HEIC/HEIF and PDF
 * are told by their magic bytes, whatever the Content-Type said; anything else keeps the served type.
 * File extensions come from fixed tables only, never from the served text, so a name can never hold a
 * path separator.
 */

/** Bytes of a file's head that `sniffType` looks at (the whole `ftyp` box of a HEIF file fits). */
export const SNIFF_BYTES = 64;

/** Image types an MCP client is given as image content. */
export const SHOWABLE_IMAGES: ReadonlySet<string> = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
]);
export const HEIF_TYPES: ReadonlySet<string> = new Set(["image/heic", "image/heif"]);

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/heic": "heic",
  "image/heif": "heif",
  "image/tiff": "tiff",
  "application/pdf": "pdf",
  "text/plain": "txt",
  "text/vcard": "vcf",
  "text/x-vcard": "vcf",
  "video/mp4": "mp4",
  "video/quicktime": "mov",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/x-m4a": "m4a",
  "audio/amr": "amr",
  "audio/x-caf": "caf",
  "application/zip": "zip",
};

const HEIC_BRANDS = new Set(["heic", "heix", "hevc", "hevx", "heim", "heis"]);
const HEIF_BRANDS = new Set(["mif1", "msf1", "heif"]);

const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) =>
  b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);

/** HEIC or HEIF by the brands of the leading `ftyp` box; AVIF (also HEIF-based) is neither. */
function heifType(b: Uint8Array): string | null {
  if (b.length < 12 || ascii(b, 4, 8) !== "ftyp") return null;
  const boxEnd = Math.min(
    b.length,
    (b[0] ?? 0) * 2 ** 24 + ((b[1] ?? 0) << 16) + ((b[2] ?? 0) << 8) + (b[3] ?? 0),
  );
  const brands = [ascii(b, 8, 12)];
  for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(ascii(b, at, at + 4));
  if (brands.some((x) => x === "avif" || x === "avis")) return null;
  if (brands.some((x) => HEIC_BRANDS.has(x))) return "image/heic";
  return brands.some((x) => HEIF_BRANDS.has(x)) ? "image/heif" : null;
}

/** The type the bytes say, or null when they are none of the known kinds. */
export function sniffType(head: Uint8Array): string | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(head, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (head.length >= 6 && (ascii(head, 0, 6) === "GIF87a" || ascii(head, 0, 6) === "GIF89a"))
    return "image/gif";
  if (head.length >= 12 && ascii(head, 0, 4) === "RIFF" && ascii(head, 8, 12) === "WEBP") return "image/webp";
  if (head.length >= 5 && ascii(head, 0, 5) === "%PDF-") return "application/pdf";
  return heifType(head);
}

/** The served Content-Type without parameters, lower case (`application/octet-stream` when absent). */
export function servedType(contentType: string | null): string {
  const bare = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return bare === "" ? "application/octet-stream" : bare;
}

/** The file extension for a type: from the table, else `bin`. */
export function extensionFor(mime: string): string {
  return EXTENSIONS[mime] ?? "bin";
}
