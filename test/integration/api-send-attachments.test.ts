/**
 * Spec section E (POST /messages/send), attachments: adapter-hosted urls resolve to the stored bytes, only
 * the first is sent, unknown or retention-deleted ones are 404, any file to a community channel is 413;
 * and the local path rules (denied places, symlinks, FIFOs, the size cap, GW_SEND_PATH_ROOTS).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DISCORD, DM, sendSetup } from "../helpers/send.ts";
import { inbound } from "../helpers/service.ts";

describe("attachments", () => {
  async function withStoredAttachment() {
    const s = await sendSetup();
    const id = s.svc.sweeper
      ? (await import("../../src/core/ids.ts")).createIdFactory(s.clock).attachment()
      : "";
    mkdirSync(s.config.attachmentDir, { recursive: true });
    writeFileSync(join(s.config.attachmentDir, id), "PNGDATA");
    s.seed([
      inbound({ attachments: [{ id, mime: "image/png", sizeBytes: 7, fileName: id, platformRef: null }] }),
    ]);
    return { ...s, attachmentId: id };
  }

  test.each([
    [`/attachments/ATT`],
    [`http://127.0.0.1:8080/attachments/ATT`],
    [`https://gw.local/attachments/ATT`],
  ])("an adapter-hosted url %s resolves to the stored bytes", async (url) => {
    const s = await withStoredAttachment();
    const r = await s.send({
      channel_id: DM,
      text: "look",
      attachments: [{ url: url.replace("ATT", s.attachmentId) }],
    });
    expect(r.status).toBe(200);
    expect(s.device.sends[0]?.attachment).toEqual({
      path: join(s.config.attachmentDir, s.attachmentId),
      mime: "image/png",
    });
  });

  test("only the first attachment is sent; the rest are dropped with a warning", async () => {
    const s = await withStoredAttachment();
    const url = `/attachments/${s.attachmentId}`;
    expect(
      (await s.send({ channel_id: DM, text: "x", attachments: [{ url, mime: "image/x-hint" }, { url }] }))
        .status,
    ).toBe(200);
    expect(s.device.sends[0]?.attachment?.mime).toBe("image/x-hint");
    expect(
      s.log.entries.some((e) => e.level === "warn" && e.msg === "only the first attachment is sent"),
    ).toBe(true);
  });

  test.each([
    ["neither url nor path", [{}], "attachments.0", "exactly_one_of_url_or_path"],
    [
      "both url and path",
      [{ url: "/attachments/x", path: "/tmp/x" }],
      "attachments.0",
      "exactly_one_of_url_or_path",
    ],
    ["a foreign url", [{ url: "https://example.com/a.png" }], "attachments.0.url", "adapter_hosted_url"],
    [
      "an attachment url with a bad id",
      [{ url: "/attachments/att_123" }],
      "attachments.0.url",
      "adapter_hosted_url",
    ],
    [
      "a url with a query",
      [{ url: "/attachments/att_01ARZ3NDEKTSV4RRFFQ69G5FAV?x=1" }],
      "attachments.0.url",
      "adapter_hosted_url",
    ],
    ["a relative path", [{ path: "photo.png" }], "attachments.0.path", "absolute_path"],
    ["a bad second item", [{ path: "/tmp/x" }, { url: "nope" }], "attachments.1.url", "adapter_hosted_url"],
  ])("%s -> 400 naming the field and rule", async (_why, attachments, field, rule) => {
    const s = await sendSetup();
    const r = await s.send({ channel_id: DM, text: "x", attachments });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field, rule } });
  });

  test("an unknown or retention-deleted attachment is 404 MESSAGE_NOT_FOUND", async () => {
    const s = await withStoredAttachment();
    const unknown = await s.send({
      channel_id: DM,
      text: "x",
      attachments: [{ url: "/attachments/att_01ARZ3NDEKTSV4RRFFQ69G5FAV" }],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("MESSAGE_NOT_FOUND");
    s.svc.store.attachments.clearFile(s.attachmentId);
    const swept = await s.send({
      channel_id: DM,
      text: "x",
      attachments: [{ url: `/attachments/${s.attachmentId}` }],
    });
    expect(swept.status).toBe(404);
    expect(s.device.sends).toHaveLength(0);
  });

  test("any attachment to a community channel is 413", async () => {
    const s = await withStoredAttachment();
    const r = await s.send({
      channel_id: DISCORD.id,
      text: "x",
      attachments: [{ url: `/attachments/${s.attachmentId}` }],
    });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("ATTACHMENT_TOO_LARGE_FOR_PLATFORM");
    expect(s.discord.sends).toHaveLength(0);
  });
});

describe("local path rules", () => {
  async function withFiles() {
    const s = await sendSetup({ GW_ATTACHMENT_MAX_BYTES: "100" });
    const home = s.dir; // HOME of the test service
    const ok = join(home, "Documents/ok.txt");
    mkdirSync(join(home, "Documents"), { recursive: true });
    writeFileSync(ok, "fine");
    for (const d of [".ssh", ".ssh-public", ".aws", "Library/Messages"])
      mkdirSync(join(home, d), { recursive: true });
    writeFileSync(join(home, ".ssh/id_ed25519"), "SECRET");
    writeFileSync(join(home, ".ssh-public/key.pub"), "public");
    writeFileSync(join(home, "Documents/big.bin"), "x".repeat(101));
    symlinkSync(join(home, ".ssh/id_ed25519"), join(home, "Documents/innocent.txt"));
    Bun.spawnSync(["mkfifo", join(home, "Documents/fifo")]);
    return { ...s, home, ok };
  }

  test("an ordinary readable file is sent by its real path", async () => {
    const s = await withFiles();
    const r = await s.send({ channel_id: DM, text: "x", attachments: [{ path: s.ok }] });
    expect(r.status).toBe(200);
    expect(s.device.sends[0]?.attachment?.path).toBe(s.ok);
  });

  test("a sibling directory that shares a denied prefix is allowed", async () => {
    const s = await withFiles();
    expect(
      (
        await s.send({
          channel_id: DM,
          text: "x",
          attachments: [{ path: join(s.home, ".ssh-public/key.pub") }],
        })
      ).status,
    ).toBe(200);
  });

  test.each([
    ["a key in ~/.ssh", (h: string) => join(h, ".ssh/id_ed25519"), "denied_location"],
    ["a traversal into ~/.ssh", (h: string) => join(h, "Documents/../.ssh/id_ed25519"), "denied_location"],
    ["a symlink to ~/.ssh", (h: string) => join(h, "Documents/innocent.txt"), "denied_location"],
    ["the directory ~/.aws itself", (h: string) => join(h, ".aws"), "denied_location"],
    ["gw's own database", (h: string) => join(h, "data/gw.db"), "denied_location"],
    ["gw's allowlist", (h: string) => join(h, "allowlist.toml"), "denied_location"],
    ["a directory", (h: string) => join(h, "Documents"), "not_regular_file"],
    ["a FIFO", (h: string) => join(h, "Documents/fifo"), "not_regular_file"],
    ["/dev/zero", () => "/dev/zero", "not_regular_file"],
    ["a missing file", (h: string) => join(h, "Documents/missing.txt"), "file_not_found"],
    ["a file over the size cap", (h: string) => join(h, "Documents/big.bin"), "too_large"],
    ["a path with a NUL byte", (h: string) => `${join(h, "Documents/ok.txt")}\u0000.png`, "absolute_path"],
  ])("%s is refused with 400", async (_why, path, rule) => {
    const s = await withFiles();
    const r = await s.send({ channel_id: DM, text: "x", attachments: [{ path: path(s.home) }] });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { rule } });
    expect(s.device.sends).toHaveLength(0);
  });

  test("GW_SEND_PATH_ROOTS confines paths to its directories", async () => {
    const dir = (await sendSetup()).dir;
    const s = await sendSetup({ GW_SEND_PATH_ROOTS: join(dir, "outbox") });
    mkdirSync(join(dir, "outbox"), { recursive: true });
    writeFileSync(join(dir, "outbox/a.txt"), "a");
    writeFileSync(join(dir, "elsewhere.txt"), "b");
    expect(
      (await s.send({ channel_id: DM, text: "x", attachments: [{ path: join(dir, "outbox/a.txt") }] }))
        .status,
    ).toBe(200);
    const r = await s.send({
      channel_id: DM,
      text: "x",
      attachments: [{ path: join(dir, "elsewhere.txt") }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.rule).toBe("outside_send_roots");
  });
});
