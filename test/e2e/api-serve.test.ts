/**
 * The compiled `dist/gw serve` on a real port, for the key paths: bearer, unread with a validation
 * rule (the compiled validators must still reject limit=0), mark_read, send with an Idempotency-Key
 * replay, and attachment streaming. The database is seeded beforehand through the real ingest
 * pipeline; this build has no platform connector yet, so a send answers 502 and that answer is what the
 * key replays.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createIdFactory } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/ports.ts";
import { inbound, seedStore } from "../helpers/messages.ts";
import { ensureBinary, freePort, isolatedEnv, startServe } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const dir = tempDir();
const env = isolatedEnv(dir, { GW_BIND_PORT: String(freePort()) });
const base = `http://127.0.0.1:${env.GW_BIND_PORT}`;
const auth = { authorization: `Bearer ${env.GW_BEARER_TOKEN}` };
const attachmentId = createIdFactory(systemClock).attachment();

/** Two messages (the first with an attachment) stored through the real ingest pipeline; their ids. */
function seed(): string[] {
  mkdirSync(env.GW_ATTACHMENT_DIR as string, { recursive: true });
  writeFileSync(join(env.GW_ATTACHMENT_DIR as string, attachmentId), "hello bytes");
  const attachment = {
    id: attachmentId,
    mime: "text/plain",
    sizeBytes: 11,
    fileName: attachmentId,
    platformRef: null,
  };
  const ids = seedStore(env, [inbound({ attachments: [attachment] }), inbound()], {
    webhooks: false,
    cursor: "2",
  });
  writeFileSync(
    env.GW_ALLOWLIST_PATH as string,
    '[[entry]]\nsource = "device_messenger"\nid = "+15555550100"\nperson_id = "ann"\n',
  );
  return ids;
}

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();
const ids = seed();
const gw = await startServe(env, { binary: true });

afterAll(async () => {
  gw.proc.kill("SIGTERM");
  expect(await gw.exited).toBe(0);
});

test("bearer and agent checks", async () => {
  expect((await fetch(`${base}/messages/unread`)).status).toBe(401);
  expect((await fetch(`${base}/messages/unread`, { headers: auth })).status).toBe(400);
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
});

test("unread, a compiled validation rule, and mark_read", async () => {
  const headers = { ...auth, "x-agent-id": "e2e" };
  const unread = (await (await fetch(`${base}/messages/unread`, { headers })).json()) as {
    messages: { id: string }[];
  };
  expect(unread.messages.map((m) => m.id)).toEqual(ids);
  const bad = await fetch(`${base}/messages/unread?limit=0`, { headers });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: { details: { field: string } } }).error.details.field).toBe("limit");
  const marked = await fetch(`${base}/messages/mark_read`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ message_ids: [ids[0]] }),
  });
  expect(await marked.json()).toEqual({ marked_count: 1 });
  const left = (await (await fetch(`${base}/messages/unread`, { headers })).json()) as {
    messages: { id: string }[];
  };
  expect(left.messages.map((m) => m.id)).toEqual([ids[1] as string]);
});

test("send with an Idempotency-Key: the replay is byte-identical", async () => {
  const send = () =>
    fetch(`${base}/messages/send`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": "e2e-key-1" },
      body: JSON.stringify({ channel_id: "+15555550100", text: "hello" }),
    });
  const first = await send();
  const second = await send();
  expect(first.status).toBe(502);
  expect(second.status).toBe(502);
  const [a, b] = [await first.text(), await second.text()];
  expect(b).toBe(a);
  expect(JSON.parse(a).error.code).toBe("PLATFORM_SEND_FAILED");
  const other = await fetch(`${base}/messages/send`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "idempotency-key": "e2e-key-1" },
    body: JSON.stringify({ channel_id: "+15555550100", text: "different" }),
  });
  expect(other.status).toBe(422);
});

test("attachment bytes stream with their headers", async () => {
  const res = await fetch(`${base}/attachments/${attachmentId}`, { headers: auth });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain");
  expect(res.headers.get("content-length")).toBe("11");
  expect(await res.text()).toBe("hello bytes");
});
