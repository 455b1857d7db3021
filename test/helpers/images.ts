/** Small real image files for attachment tests: a valid PNG built here, and the head of a HEIC file. */
import { deflateSync } from "node:zlib";

function chunk(type: string, data: Uint8Array): Uint8Array {
  const body = new Uint8Array([...new TextEncoder().encode(type), ...data]);
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(body, 4);
  view.setUint32(8 + data.length, Bun.hash.crc32(body));
  return out;
}

/** A valid `size`×`size` RGB PNG of one colour. */
export function tinyPng(size = 4, rgb: [number, number, number] = [204, 102, 51]): Uint8Array {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, size);
  v.setUint32(4, size);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = [0, ...Array.from({ length: size }, () => rgb).flat()];
  const raw = new Uint8Array(Array.from({ length: size }, () => row).flat());
  return new Uint8Array([
    ...[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    ...chunk("IHDR", ihdr),
    ...chunk("IDAT", deflateSync(raw)),
    ...chunk("IEND", new Uint8Array()),
  ]);
}

/** The start of an iPhone photo: an `ftyp` box of brand heic (mif1, heic compatible), then other bytes. */
export function heicBytes(): Uint8Array {
  const ftyp = [0, 0, 0, 0x18, ..."ftypheic".split("").map((c) => c.charCodeAt(0)), 0, 0, 0, 0];
  const brands = "mif1heic".split("").map((c) => c.charCodeAt(0));
  return new Uint8Array([...ftyp, ...brands, ...crypto.getRandomValues(new Uint8Array(4000))]);
}
