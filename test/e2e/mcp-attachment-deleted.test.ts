/**
 * `gw mcp`'s attachment copies of a deleted message are never handed out again (extensions.md §4), through
 * the official MCP client against the real service over HTTP, with the real discord.js logged in to the
 * fake Discord: once Ann deletes her message (MESSAGE_DELETE), the copy `get_attachment` left in the cache
 * is removed — by the events follower of `gw mcp --extended`, by the channel's own follower with
 * `--channel`, and at start for a copy left from before — while other copies stay; get_attachment on it
 * then answers MESSAGE_NOT_FOUND and leaves no file (a 404 alone, as after retention, removes every copy).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import { startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { info } from "../helpers/attachment-service.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { closeAll, connectMcp, type McpHandle } from "../helpers/mcp-client.ts";
import { freePort, waitFor } from "../helpers/process.ts";
import { AGENT, TOKEN } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

const fake = await startFakeDiscord();
const ann = fake.user({ username: "ann_user", global_name: "Ann" });
const guild = fake.guild({ name: "Home" });
const general = fake.channel(guild.id, { name: "general" });

afterAll(async () => {
  await closeAll();
  await fake.stop();
});

/** The service on a port; `post` has Ann post a text file and returns the Discord id and gw's attachment id. */
async function world() {
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
  const port = freePort();
  gw.svc.app.listen({ hostname: "127.0.0.1", port, reusePort: false });
  afterAll(() => gw.svc.app.stop(true));
  const env = { GW_BEARER_TOKEN: TOKEN, GW_AGENT_ID: "claude-code", GW_BASE_URL: `http://127.0.0.1:${port}` };
  const attachmentDir = gw.env.GW_ATTACHMENT_DIR as string;
  const post = async (text: string) => {
    const m = fake.message(general.id, {
      author: ann,
      content: text,
      attachments: [{ filename: `${text}.txt`, contentType: "text/plain", data: `${text}\n` }],
    });
    const envelope = await waitFor(async () => {
      const res = await gw.request("GET", "/messages/unread?limit=100", { headers: AGENT });
      const { messages } = (await res.json()) as { messages: Envelope[] };
      return messages.find((x) => x.text === text);
    }, `"${text}" stored`);
    return { discordId: m.id as string, attachmentId: envelope.attachments[0]?.id as string };
  };
  const deleted = (discordId: string) => fake.remove(general.id, [discordId]);
  return { gw, env, attachmentDir, post, deleted };
}

/** get_attachment's copy of `id`: its path, after checking its bytes. */
async function fetchCopy(mcp: McpHandle, id: string, text: string): Promise<string> {
  const r = await mcp.call("get_attachment", { attachment_id: id });
  expect(r.isError).toBeFalsy();
  const path = info(r).path as string;
  expect(readFileSync(path, "utf8")).toBe(`${text}\n`);
  return path;
}

const gone = (path: string) =>
  waitFor(() => (existsSync(path) ? undefined : true), `${path} removed`, 15_000);

/** get_attachment of a deleted message's attachment: MESSAGE_NOT_FOUND, and no file of it in `dir`. */
async function expectNotHandedOut(mcp: McpHandle, dir: string, id: string) {
  const r = await mcp.call("get_attachment", { attachment_id: id });
  expect(r.isError).toBe(true);
  expect((r.data as { error: { code: string } }).error.code).toBe("MESSAGE_NOT_FOUND");
  expect(readdirSync(dir).filter((n) => n.startsWith(id))).toEqual([]);
}

const cacheOf = (tmp: string) => join(tmp, `gw-mcp-${process.getuid?.()}`);

describe("a deleted message's attachment copy", () => {
  test("gw mcp --extended removes it when the message.deleted event comes; other copies stay", async () => {
    const w = await world();
    const doomed = await w.post("doomed");
    const kept = await w.post("kept");
    const mcp = await connectMcp(["--extended"], w.env);
    const doomedPath = await fetchCopy(mcp, doomed.attachmentId, "doomed");
    const keptPath = await fetchCopy(mcp, kept.attachmentId, "kept");

    w.deleted(doomed.discordId);
    await gone(doomedPath);
    expect(existsSync(keptPath)).toBe(true);
    await expectNotHandedOut(mcp, cacheOf(mcp.tmp), doomed.attachmentId);
    expect(readFileSync(keptPath, "utf8")).toBe("kept\n");
  });

  test("gw mcp --channel: its one events follower pushes the unsend and removes the copy", async () => {
    const w = await world();
    const doomed = await w.post("secret");
    const mcp = await connectMcp(["--channel"], w.env);
    const path = await fetchCopy(mcp, doomed.attachmentId, "secret");

    w.deleted(doomed.discordId);
    await gone(path);
    await waitFor(
      () => (mcp.pushed.some((p) => p.meta.event === "message.deleted") ? true : undefined),
      "the unsend pushed",
    );
    await expectNotHandedOut(mcp, cacheOf(mcp.tmp), doomed.attachmentId);
  });

  test("get_attachment answered 404 (bytes gone, no event: retention) removes every copy of the id", async () => {
    const w = await world();
    const expired = await w.post("expired");
    const mcp = await connectMcp(["--extended"], w.env);
    const path = await fetchCopy(mcp, expired.attachmentId, "expired");
    const leftover = `${path.slice(0, -".txt".length)}.0a1b2c.txt`;
    writeFileSync(leftover, "expired\n");
    const row = w.gw.svc.store.attachments.get(expired.attachmentId);
    rmSync(join(w.attachmentDir, row?.file_name as string));

    await expectNotHandedOut(mcp, cacheOf(mcp.tmp), expired.attachmentId);
    expect(existsSync(path) || existsSync(leftover)).toBe(false);
  });

  test("a copy left from before gw mcp started is removed at start", async () => {
    const w = await world();
    const doomed = await w.post("earlier");
    const kept = await w.post("still here");
    const tmp = join(tempDir(), "tmp");
    mkdirSync(tmp);
    const first = await connectMcp(["--extended"], { ...w.env, TMPDIR: tmp });
    const doomedPath = await fetchCopy(first, doomed.attachmentId, "earlier");
    const keptPath = await fetchCopy(first, kept.attachmentId, "still here");
    await first.client.close();

    w.deleted(doomed.discordId);
    await waitFor(async () => {
      const res = await w.gw.request("GET", "/events?limit=100", { headers: AGENT });
      const { events } = (await res.json()) as { events: { kind: string }[] };
      return events.some((e) => e.kind === "message.deleted") ? true : undefined;
    }, "the deletion stored");
    expect(existsSync(doomedPath)).toBe(true);

    await connectMcp(["--extended"], { ...w.env, TMPDIR: tmp });
    await gone(doomedPath);
    expect(existsSync(keptPath)).toBe(true);
  });
});
