/**
 * get_attachment's cache on a real file system: a private directory (0700, refused when it is not a
 * directory of ours), 0600 copies, nothing left of a download that broke off, and pruning after 24 h by
 * the injected clock.
 */
import { describe, expect, test } from "bun:test";
import {
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { CACHE_MAX_AGE_MS, cacheDirFor, createAttachmentCache } from "../../src/mcp/attachment-cache.ts";
import { tinyPng } from "../helpers/images.ts";
import { manualClock } from "../helpers/messages.ts";
import { tempDir } from "../helpers/temp.ts";

const ID = "att_01ARZ3NDEKTSV4RRFFQ69G5FAV";
const uid = process.getuid?.() ?? null;

async function* chunks(...parts: Uint8Array[]) {
  for (const p of parts) yield p;
}

function cache(dir = cacheDirFor(tempDir(), "tester")) {
  const clock = manualClock(Date.now());
  return { dir, clock, c: createAttachmentCache({ dir, uid, clock }) };
}

describe("the directory", () => {
  test("is created 0700 (and made 0700 again if it was opened up)", () => {
    const { dir, c } = cache();
    c.prepare();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    Bun.spawnSync(["chmod", "755", dir]);
    c.prepare();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  test("a file or a symlink in its place is refused", () => {
    const base = tempDir();
    writeFileSync(join(base, "gw-mcp-a"), "x");
    expect(() => cache(join(base, "gw-mcp-a")).c.prepare()).toThrow("already exists");
    symlinkSync(tempDir(), join(base, "gw-mcp-b"));
    expect(() => cache(join(base, "gw-mcp-b")).c.prepare()).toThrow("is not a directory");
  });

  test("another user's directory is refused", () => {
    const dir = tempDir();
    const c = createAttachmentCache({ dir, uid: (uid ?? 0) + 1, clock: manualClock() });
    expect(() => c.prepare()).toThrow("belongs to another user");
  });
});

describe("copies", () => {
  test("streamed in pieces to a 0600 file named by the sniffed type; keep names it by the id", async () => {
    const { dir, c } = cache();
    c.prepare();
    const png = tinyPng();
    const saved = await c.save(ID, chunks(png.subarray(0, 3), png.subarray(3)), "application/octet-stream");
    expect(saved).toMatchObject({ sizeBytes: png.length, mime: "image/png", sniffed: "image/png" });
    expect(saved.path).toEndWith(".png");
    expect(statSync(saved.path).mode & 0o777).toBe(0o600);
    const kept = c.keep(ID, saved);
    expect(kept).toBe(join(dir, `${ID}.png`));
    expect(readFileSync(kept)).toEqual(Buffer.from(png));
    expect(readdirSync(dir)).toEqual([`${ID}.png`]);
  });

  test("the served type names what the bytes do not", async () => {
    const { c } = cache();
    c.prepare();
    const saved = await c.save(ID, chunks(new TextEncoder().encode("hi")), "text/plain");
    expect(saved).toMatchObject({ mime: "text/plain", sniffed: null });
    expect(saved.path).toEndWith(".txt");
  });

  test("a download that breaks off leaves nothing behind", async () => {
    const { dir, c } = cache();
    c.prepare();
    async function* broken() {
      yield new Uint8Array([1, 2, 3]);
      throw new Error("connection reset");
    }
    await expect(c.save(ID, broken(), "text/plain")).rejects.toThrow("connection reset");
    expect(readdirSync(dir)).toEqual([]);
  });

  test("copies older than 24 h are pruned at the next prepare; younger ones and other files stay", () => {
    const { dir, clock, c } = cache();
    c.prepare();
    const old = join(dir, `${ID}.pdf`);
    const young = join(dir, `${ID}.1234.part-x`);
    const foreign = join(dir, "notes.txt");
    for (const f of [old, young, foreign]) writeFileSync(f, "x");
    const ageS = (clock.now() - CACHE_MAX_AGE_MS - 1000) / 1000;
    utimesSync(old, ageS, ageS);
    utimesSync(foreign, ageS, ageS);
    c.prepare();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
    expect(existsSync(foreign)).toBe(true);
    clock.advance(CACHE_MAX_AGE_MS + 1000);
    c.prepare();
    expect(existsSync(young)).toBe(false);
  });
});

describe("a deleted message's copies (forget, cachedIds)", () => {
  const OTHER = "att_01ARZ3NDEKTSV4RRFFQ69G5FAW";

  test("cachedIds lists each id with any file once; forget removes every file of one id only", () => {
    const { dir, c } = cache();
    c.prepare();
    const mine = [`${ID}.pdf`, `${ID}.4f1c.jpg`, `${ID}.part-9a7e`];
    const others = [`${OTHER}.txt`, "notes.txt", `${ID}x.pdf`];
    for (const f of [...mine, ...others]) writeFileSync(join(dir, f), "x");
    expect(c.cachedIds().sort()).toEqual([ID, OTHER]);
    c.forget(ID);
    expect(readdirSync(dir).sort()).toEqual(others.sort());
    expect(c.cachedIds()).toEqual([OTHER]);
    c.forget(ID);
  });

  test("no directory yet, or not ours: nothing listed, nothing removed, nothing created", () => {
    const { dir, c } = cache();
    expect(c.cachedIds()).toEqual([]);
    c.forget(ID);
    expect(existsSync(dir)).toBe(false);
    const foreign = tempDir();
    writeFileSync(join(foreign, `${ID}.pdf`), "x");
    const notOurs = createAttachmentCache({ dir: foreign, uid: (uid ?? 0) + 1, clock: manualClock() });
    expect(notOurs.cachedIds()).toEqual([]);
    notOurs.forget(ID);
    expect(existsSync(join(foreign, `${ID}.pdf`))).toBe(true);
  });
});
