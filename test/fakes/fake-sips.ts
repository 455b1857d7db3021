/**
 * A stand-in for macOS `sips` (used as GW_SIPS_PATH through a small sh wrapper, test/helpers/sips.ts):
 * called as `-s format jpeg <in> --out <out>`, it checks that <in> is HEIC/HEIF and writes a real baseline
 * JPEG (8×8, grey) to <out>, exit 0. GW_STANDIN_SIPS_FAIL=<text> makes it fail like sips (`Error: <text>`
 * on stderr, exit 1); GW_STANDIN_SIPS_LOG=<file> gets one JSON line per call: argv and the env names seen.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { sniffType } from "../../src/mcp/file-type.ts";

const seg = (marker: number, body: number[]) => [
  0xff,
  marker,
  (body.length + 2) >> 8,
  (body.length + 2) & 0xff,
  ...body,
];

/**
 * One 8×8 grey block: a flat quantisation table, one-symbol Huffman tables (DC category 0, AC end-of-block,
 * both coded `0`), so the scan is the bits `00` padded with ones.
 */
export function tinyJpeg(): Uint8Array {
  const jfif = [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
  const dqt = [0x00, ...new Array(64).fill(1)];
  const sof0 = [8, 0, 8, 0, 8, 1, 1, 0x11, 0];
  const oneSymbol = (tableClass: number) => [tableClass << 4, 1, ...new Array(15).fill(0), 0x00];
  const sos = [1, 1, 0x00, 0, 63, 0];
  return new Uint8Array([
    0xff,
    0xd8,
    ...seg(0xe0, jfif),
    ...seg(0xdb, dqt),
    ...seg(0xc0, sof0),
    ...seg(0xc4, oneSymbol(0)),
    ...seg(0xc4, oneSymbol(1)),
    ...seg(0xda, sos),
    0x3f,
    0xff,
    0xd9,
  ]);
}

function fail(text: string): never {
  process.stderr.write(`Error: ${text}\n`);
  process.exit(1);
}

function main(argv: string[], env: Record<string, string | undefined>): void {
  if (env.GW_STANDIN_SIPS_LOG)
    appendFileSync(env.GW_STANDIN_SIPS_LOG, `${JSON.stringify({ argv, env: Object.keys(env).sort() })}\n`);
  if (env.GW_STANDIN_SIPS_FAIL) fail(env.GW_STANDIN_SIPS_FAIL);
  const [s, key, format, input, out, output] = argv;
  if (argv.length !== 6 || s !== "-s" || key !== "format" || format !== "jpeg" || out !== "--out")
    fail(`unexpected arguments ${JSON.stringify(argv)}`);
  if (!input || !existsSync(input)) fail(`${input} does not exist`);
  const type = sniffType(readFileSync(input).subarray(0, 64));
  if (type !== "image/heic" && type !== "image/heif") fail(`${input} is not a HEIF image (${type})`);
  writeFileSync(output as string, tinyJpeg());
}

if (import.meta.main) main(process.argv.slice(2), process.env);
