/** get_attachment's pure parts: types by magic bytes, extensions from fixed tables, the sips argv. */
import { describe, expect, test } from "bun:test";
import { extensionFor, servedType, sniffType } from "../../src/mcp/file-type.ts";
import { sipsArgv } from "../../src/mcp/heic-to-jpeg.ts";
import { tinyJpeg } from "../fakes/fake-sips.ts";
import { heicBytes, tinyPng } from "../helpers/images.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
/** An ISO-BMFF `ftyp` box of `major` with `compatible` brands. */
const ftyp = (major: string, ...compatible: string[]) => {
  const body = bytes(`ftyp${major}\0\0\0\0${compatible.join("")}`);
  return new Uint8Array([0, 0, 0, body.length + 4, ...body]);
};

describe("sniffType", () => {
  test.each([
    ["PNG", tinyPng(), "image/png"],
    ["JPEG", tinyJpeg(), "image/jpeg"],
    ["GIF89a", bytes("GIF89a\x01\x00"), "image/gif"],
    ["GIF87a", bytes("GIF87a\x01\x00"), "image/gif"],
    ["WebP", bytes("RIFF\x24\x00\x00\x00WEBPVP8 "), "image/webp"],
    ["PDF", bytes("%PDF-1.7\n"), "application/pdf"],
    ["HEIC (iPhone)", heicBytes(), "image/heic"],
    ["HEIC by a compatible brand", ftyp("mif1", "mif1", "heic"), "image/heic"],
    ["HEIF", ftyp("mif1", "mif1"), "image/heif"],
    ["AVIF is not HEIC", ftyp("avif", "mif1", "miaf"), null],
    ["AVIF with mif1 first", ftyp("mif1", "avif"), null],
    ["MP4 video", ftyp("isom", "isom", "mp41"), null],
    ["a RIFF that is not WebP", bytes("RIFF\x24\x00\x00\x00WAVEfmt "), null],
    ["text", bytes("hello"), null],
    ["nothing", new Uint8Array(), null],
    ["half a PNG signature", new Uint8Array([0x89, 0x50, 0x4e]), null],
  ])("%s", (_what, head, expected) => {
    expect(sniffType(head)).toBe(expected);
  });
});

test("servedType drops parameters and case; no header is octet-stream", () => {
  expect(servedType("Text/Plain; charset=utf-8")).toBe("text/plain");
  expect(servedType(null)).toBe("application/octet-stream");
  expect(servedType("  ")).toBe("application/octet-stream");
});

test("extensionFor: the table, else bin, never a served string", () => {
  expect(extensionFor("image/jpeg")).toBe("jpg");
  expect(extensionFor("image/heic")).toBe("heic");
  expect(extensionFor("application/pdf")).toBe("pdf");
  expect(extensionFor("text/plain")).toBe("txt");
  expect(extensionFor("application/x-../../etc")).toBe("bin");
  expect(extensionFor("")).toBe("bin");
});

test("sipsArgv: values only as arguments, in sips's order", () => {
  expect(sipsArgv("/usr/bin/sips", "/c/a b.heic", "/c/-o.jpg")).toEqual([
    "/usr/bin/sips",
    "-s",
    "format",
    "jpeg",
    "/c/a b.heic",
    "--out",
    "/c/-o.jpg",
  ]);
});
