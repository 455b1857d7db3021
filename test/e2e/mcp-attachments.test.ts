/**
 * `get_attachment` of `gw mcp --extended`, through the official MCP client, against a real gw service over
 * HTTP: images (by their magic bytes) up to 5 MB as image content with the stored bytes; other files and
 * larger images as a byte-identical private local copy; the error envelope for an unknown id; and
 * `attachment_ids` in a channel notification's meta. HEIC: mcp-attachments-heic.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { attachmentsOverMcp, cacheDir, decoded, ids, info } from "../helpers/attachment-service.ts";
import { tinyPng } from "../helpers/images.ts";
import { connectMcp } from "../helpers/mcp-client.ts";
import { waitFor } from "../helpers/process.ts";
import { inbound } from "../helpers/service.ts";

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
const { s, gw, stored } = await attachmentsOverMcp();

describe("images come back as image content", () => {
  test("a PNG: the decoded bytes are the stored file's, and no copy is left behind", async () => {
    const png = tinyPng();
    const id = stored(png, "image/png");
    const r = await gw.call("get_attachment", { attachment_id: id });
    expect(r.isError).toBeFalsy();
    expect(r.content.map((c) => c.type)).toEqual(["text", "image"]);
    expect(r.content[1]?.mimeType).toBe("image/png");
    expect(decoded(r)).toEqual(Buffer.from(png));
    expect(info(r)).toEqual({ attachment_id: id, mime: "image/png", size_bytes: png.length });
    expect(r.structuredContent).toEqual(info(r));
    expect(readdirSync(cacheDir(gw)).filter((n) => n.startsWith(id))).toEqual([]);
  });

  test("the type comes from the bytes: a PNG served as octet-stream is shown, text served as PNG is not", async () => {
    const png = tinyPng(2, [1, 2, 3]);
    const shown = await gw.call("get_attachment", { attachment_id: stored(png, "application/octet-stream") });
    expect(shown.content[1]?.mimeType).toBe("image/png");
    expect(decoded(shown)).toEqual(Buffer.from(png));
    const text = new TextEncoder().encode("not a picture\n");
    const notShown = await gw.call("get_attachment", { attachment_id: stored(text, "image/png") });
    expect(notShown.content).toHaveLength(1);
    expect(readFileSync(info(notShown).path as string)).toEqual(Buffer.from(text));
  });
});

describe("other files come back as the path of a byte-identical private copy", () => {
  test.each([
    [
      "a PDF",
      new TextEncoder().encode("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"),
      "application/pdf",
      ".pdf",
    ],
    ["a text file", new TextEncoder().encode("meet at 8\n"), "text/plain", ".txt"],
  ])("%s", async (_what, bytes, mime, ext) => {
    const id = stored(bytes, mime);
    const r = await gw.call("get_attachment", { attachment_id: id });
    expect(r.isError).toBeFalsy();
    expect(r.content).toHaveLength(1);
    const { path, ...rest } = info(r);
    expect(rest).toEqual({ attachment_id: id, mime, size_bytes: bytes.length });
    expect(isAbsolute(path as string)).toBe(true);
    expect(path).toBe(join(cacheDir(gw), `${id}${ext}`));
    expect(readFileSync(path as string)).toEqual(Buffer.from(bytes));
    expect(statSync(path as string).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path as string)).mode & 0o777).toBe(0o700);
  });

  test("an image over 5 MB, with a note saying why", async () => {
    const big = new Uint8Array([...tinyPng(), ...crypto.getRandomValues(new Uint8Array(65_536))]);
    const bytes = new Uint8Array(5 * 1024 * 1024 + 1);
    for (let at = 0; at < bytes.length; at += big.length) bytes.set(big.subarray(0, bytes.length - at), at);
    const id = stored(bytes, "image/png");
    const r = await gw.call("get_attachment", { attachment_id: id });
    expect(r.content).toHaveLength(1);
    const i = info(r);
    expect(i).toMatchObject({ attachment_id: id, mime: "image/png", size_bytes: bytes.length });
    expect(i.note).toContain("larger than 5 MB");
    expect(readFileSync(i.path as string).equals(Buffer.from(bytes))).toBe(true);
  });
});

test("an unknown attachment id is the service's MESSAGE_NOT_FOUND envelope, and nothing is written", async () => {
  const id = ids.attachment();
  const r = await gw.call("get_attachment", { attachment_id: id });
  expect(r.isError).toBe(true);
  expect((r.data as { error: { code: string } }).error.code).toBe("MESSAGE_NOT_FOUND");
  expect(JSON.parse(r.content[0]?.text ?? "")).toEqual(r.data as Record<string, unknown>);
  expect(readdirSync(cacheDir(gw)).filter((n) => n.startsWith(id))).toEqual([]);
});

test("a channel notification lists the message's attachment ids; the agent can fetch them", async () => {
  const ch = await connectMcp(["--channel"], s.env);
  const png = tinyPng(3);
  const atts = [s.staged(png, "image/png"), s.staged(new TextEncoder().encode("list\n"), "text/plain")];
  const [withFiles] = s.t.seed([inbound({ text: "two files", attachments: atts, timestampMs: Date.now() })]);
  const [plain] = s.t.seed([inbound({ text: "no files", timestampMs: Date.now() })]);
  const seen = await waitFor(
    () => (ch.pushed.some((p) => p.meta.message_id === plain) ? ch.pushed : undefined),
    "both notifications",
    15_000,
  );
  const byId = (m: string | undefined) => seen.find((p) => p.meta.message_id === m)?.meta ?? {};
  expect(byId(withFiles).attachment_ids).toBe(atts.map((a) => a.id).join(","));
  expect(byId(plain)).not.toHaveProperty("attachment_ids");
  const r = await ch.call("get_attachment", {
    attachment_id: byId(withFiles).attachment_ids?.split(",")[0] ?? "",
  });
  expect(decoded(r)).toEqual(Buffer.from(png));
  expect(existsSync(cacheDir(ch))).toBe(true);
});
