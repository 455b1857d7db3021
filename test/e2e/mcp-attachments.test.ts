/**
 * `get_attachment` of `gw mcp --extended`, through the official MCP client, against a real gw service over
 * HTTP: images (by their magic bytes) up to 5 MB as image content with the stored bytes; other files, larger
 * images and unconvertible HEIC as a byte-identical private local copy; HEIC converted by the `sips`
 * stand-in; the error envelope for an unknown id; and `attachment_ids` in a channel notification's meta.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { createIdFactory } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/ports.ts";
import type { StagedAttachment } from "../../src/ingest/ingest.ts";
import { tinyJpeg } from "../fakes/fake-sips.ts";
import { heicBytes, tinyPng } from "../helpers/images.ts";
import { closeAll, connectMcp, type McpHandle, type ToolResult } from "../helpers/mcp-client.ts";
import { freePort, waitFor } from "../helpers/process.ts";
import { inbound, TOKEN, testService } from "../helpers/service.ts";
import { sipsStandIn } from "../helpers/sips.ts";
import { tempDir } from "../helpers/temp.ts";

const ids = createIdFactory(systemClock);
let t: Awaited<ReturnType<typeof testService>>;
let env: Record<string, string>;
let gw: McpHandle;

/** Stores `bytes` as a new attachment of a new allowlisted message; its id. */
function stored(bytes: Uint8Array, mime: string, at = Date.UTC(2020, 0, 1)): string {
  const a: StagedAttachment = {
    id: ids.attachment(),
    mime,
    sizeBytes: bytes.length,
    fileName: "",
    platformRef: null,
  };
  a.fileName = a.id;
  mkdirSync(t.attachmentsDir, { recursive: true });
  writeFileSync(join(t.attachmentsDir, a.id), bytes);
  t.seed([inbound({ attachments: [a], timestampMs: at })]);
  return a.id;
}

const info = (r: ToolResult) => JSON.parse(r.content[0]?.text ?? "{}") as Record<string, unknown>;
const decoded = (r: ToolResult) => Buffer.from(r.content[1]?.data ?? "", "base64");
const cacheDir = (h: McpHandle) => join(h.tmp, `gw-mcp-${process.getuid?.()}`);

beforeAll(async () => {
  t = await testService({ clock: systemClock });
  const port = freePort();
  t.svc.app.listen({ hostname: "127.0.0.1", port, reusePort: false });
  env = { GW_BEARER_TOKEN: TOKEN, GW_AGENT_ID: "mcp-agent", GW_BASE_URL: `http://127.0.0.1:${port}` };
  gw = await connectMcp(["--extended"], { ...env, GW_SIPS_PATH: "/nonexistent/sips" });
});
afterAll(async () => {
  await closeAll();
  await t.svc.app.stop();
});

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

describe("HEIC", () => {
  test("converted by sips (the stand-in) to JPEG image content, values in argv, a minimal environment", async () => {
    const log = join(tempDir(), "sips.log");
    const sips = sipsStandIn(tempDir());
    const c = await connectMcp(["--extended"], { ...env, GW_SIPS_PATH: sips, GW_STANDIN_SIPS_LOG: log });
    const heic = heicBytes();
    const id = stored(heic, "image/heic");
    const r = await c.call("get_attachment", { attachment_id: id });
    expect(r.isError).toBeFalsy();
    expect(r.content[1]?.mimeType).toBe("image/jpeg");
    expect(decoded(r)).toEqual(Buffer.from(tinyJpeg()));
    expect(info(r)).toEqual({
      attachment_id: id,
      mime: "image/jpeg",
      size_bytes: tinyJpeg().length,
      converted_from: "image/heic",
    });
    const [call] = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(call.argv.slice(0, 3)).toEqual(["-s", "format", "jpeg"]);
    expect(call.argv[3]).toStartWith(join(cacheDir(c), `${id}.`));
    expect(call.argv[3]).toEndWith(".heic");
    expect(call.argv[4]).toBe("--out");
    expect(call.argv[5]).toEndWith(".jpg");
    expect(call.env).not.toContain("GW_BEARER_TOKEN");
    expect(call.env).not.toContain("GW_BASE_URL");
    expect(call.env).toContain("GW_STANDIN_SIPS_LOG");
    expect(readdirSync(cacheDir(c)).filter((n) => n.startsWith(id))).toEqual([]);
  });

  test("without a converter: the path of the HEIC file and a note saying why", async () => {
    const heic = heicBytes();
    const id = stored(heic, "image/heic");
    const r = await gw.call("get_attachment", { attachment_id: id });
    expect(r.isError).toBeFalsy();
    expect(r.content).toHaveLength(1);
    const i = info(r);
    expect(i).toMatchObject({ attachment_id: id, mime: "image/heic", size_bytes: heic.length });
    expect(i.note).toContain("HEIC could not be shown");
    expect(i.note).toContain("/nonexistent/sips (GW_SIPS_PATH) does not exist");
    expect(i.path).toBe(join(cacheDir(gw), `${id}.heic`));
    expect(readFileSync(i.path as string)).toEqual(Buffer.from(heic));
  });

  test("a converter that fails: the path and its error in the note", async () => {
    const c = await connectMcp(["--extended"], {
      ...env,
      GW_SIPS_PATH: sipsStandIn(tempDir()),
      GW_STANDIN_SIPS_FAIL: "Cannot decode this image",
    });
    const heic = heicBytes();
    const r = await c.call("get_attachment", { attachment_id: stored(heic, "image/heic") });
    const i = info(r);
    expect(i.note).toContain("HEIC could not be shown");
    expect(i.note).toContain("Cannot decode this image");
    expect(readFileSync(i.path as string)).toEqual(Buffer.from(heic));
    expect(readdirSync(cacheDir(c)).filter((n) => n.endsWith(".jpg"))).toEqual([]);
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
  const ch = await connectMcp(["--channel"], env);
  const png = tinyPng(3);
  const atts: StagedAttachment[] = [png, new TextEncoder().encode("list\n")].map((bytes, n) => {
    const id = ids.attachment();
    writeFileSync(join(t.attachmentsDir, id), bytes);
    return {
      id,
      mime: n === 0 ? "image/png" : "text/plain",
      sizeBytes: bytes.length,
      fileName: id,
      platformRef: null,
    };
  });
  const [withFiles] = t.seed([inbound({ text: "two files", attachments: atts, timestampMs: Date.now() })]);
  const [plain] = t.seed([inbound({ text: "no files", timestampMs: Date.now() })]);
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
