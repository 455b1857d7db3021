/**
 * `get_attachment` of a HEIC photo, through the official MCP client against a real gw service over HTTP:
 * converted by the `sips` stand-in (GW_SIPS_PATH) into JPEG image content, with the values in argv and a
 * minimal environment; without a converter, or with one that fails, the path of a byte-identical copy and
 * a note saying why.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tinyJpeg } from "../fakes/fake-sips.ts";
import { attachmentsOverMcp, cacheDir, decoded, info } from "../helpers/attachment-service.ts";
import { heicBytes } from "../helpers/images.ts";
import { connectMcp } from "../helpers/mcp-client.ts";
import { sipsStandIn } from "../helpers/sips.ts";
import { tempDir } from "../helpers/temp.ts";

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
const { s, gw, stored } = await attachmentsOverMcp({ GW_SIPS_PATH: "/nonexistent/sips" });
const env: Record<string, string> = s.env;

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
