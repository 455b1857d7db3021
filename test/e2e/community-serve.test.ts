/**
 * `gw serve` with Discord as users run it: the compiled dist/gw logs in to the fake Discord, ingests,
 * replies and closes the gateway on SIGTERM; and a kill -9 after Discord made a post but before gw
 * recorded it never leads to a second post: the retry with the same Idempotency-Key answers that the
 * outcome is unknown; and the connected mark kept while it ran survives a kill -9, so the next start
 * fetches an allowlisted person's first DM written while gw was down.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import type { Envelope } from "../../src/core/envelope.ts";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import { allowBob } from "../helpers/allowlist.ts";
import { allowAnn } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import {
  ensureBinary,
  freePort,
  isolatedEnv,
  spawnGw,
  waitFor,
  waitForConnectors,
} from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const discord = fakeDiscords();

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();

async function setUp() {
  const { fake, ann, general } = await discord.home();
  const env = isolatedEnv(tempDir(), {
    GW_BIND_PORT: String(freePort()),
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, allowAnn(ann.id));
  const base = `http://127.0.0.1:${env.GW_BIND_PORT}`;
  const headers = { authorization: `Bearer ${env.GW_BEARER_TOKEN}`, "x-agent-id": "e2e" };
  const connected = () => waitForConnectors(Number(env.GW_BIND_PORT), { community_chat: "ok" });
  const unread = async () =>
    ((await (await fetch(`${base}/messages/unread`, { headers })).json()) as { messages: Envelope[] })
      .messages;
  const send = (text: string, key: string) =>
    fetch(`${base}/messages/send`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ channel_id: `community_chat:channel:${general.id}`, text }),
    });
  return { fake, ann, general, env, connected, unread, send };
}

test("the compiled dist/gw connects to Discord, ingests, replies, and closes the gateway on SIGTERM", async () => {
  const s = await setUp();
  const gw = spawnGw(["serve"], s.env, { binary: true });
  try {
    await s.connected();
    s.fake.message(s.general.id, { author: s.ann, content: "hi from Discord" });
    const [m] = await waitFor(async () => {
      const l = await s.unread();
      return l.length > 0 ? l : undefined;
    }, "the message");
    expect(m).toMatchObject({ text: "hi from Discord", sender: { person_id: "ann" } });
    const res = await s.send("hello from gw", "k-1");
    expect(res.status).toBe(200);
    expect(s.fake.posted.map((p) => p.body.content)).toEqual(["hello from gw"]);
  } finally {
    gw.proc.kill("SIGTERM");
  }
  expect(await gw.exited).toBe(0);
  expect(s.fake.gateway.connections()).toBe(0);
  expect(gw.output().stderr).not.toContain(FAKE_BOT_TOKEN);
});

test("kill -9 after Discord posted but before gw recorded: the retry never posts again", async () => {
  const s = await setUp();
  let gw = spawnGw(["serve"], s.env);
  try {
    await s.connected();
    s.fake.message(s.general.id, { author: s.ann, content: "question" });
    await waitFor(async () => ((await s.unread()).length > 0 ? true : undefined), "the message");
    // Discord makes the post, then never answers (every retry too).
    s.fake.fail({ method: "POST", path: /\/messages$/, status: 200, hang: "after-create", times: 10 });
    const inFlight = s.send("answer", "crash-key").catch(() => null);
    await waitFor(() => (s.fake.posted.length === 1 ? true : undefined), "Discord to make the post");
    gw.proc.kill("SIGKILL");
    await gw.exited;
    await inFlight;

    gw = spawnGw(["serve"], s.env);
    await s.connected();
    const retry = await s.send("answer", "crash-key");
    expect(retry.status).toBe(502);
    expect(await retry.json()).toMatchObject({
      error: { code: "PLATFORM_SEND_FAILED", details: { reason: "outcome_unknown" } },
    });
    expect(s.fake.posted).toHaveLength(1);
  } finally {
    gw.proc.kill("SIGTERM");
    await gw.exited;
  }
});

test("kill -9: the connected mark kept while running lets the next start fetch a first DM written meanwhile", async () => {
  const s = await setUp();
  const bob = s.fake.user({ username: "bob_user", global_name: "Bob" });
  writeFileSync(s.env.GW_ALLOWLIST_PATH as string, `${allowAnn(s.ann.id)}${allowBob(bob.id)}`);
  const mark = () => {
    try {
      const db = new Database(s.env.GW_DB_PATH as string, { readonly: true });
      try {
        const row = db.query("SELECT position FROM connector_cursors WHERE source = 'community_chat'").get();
        return (row as { position: string } | null)?.position;
      } finally {
        db.close();
      }
    } catch {
      return undefined;
    }
  };
  let gw = spawnGw(["serve"], s.env);
  try {
    await s.connected();
    await waitFor(mark, "the connected mark");
    gw.proc.kill("SIGKILL");
    await gw.exited;
    const dm = s.fake.dm(bob);
    s.fake.message(dm.id, { author: bob, content: "bob's first DM", dispatch: false });

    gw = spawnGw(["serve"], s.env);
    await s.connected();
    const [m] = await waitFor(async () => {
      const l = await s.unread();
      return l.length > 0 ? l : undefined;
    }, "bob's DM");
    expect(m).toMatchObject({
      text: "bob's first DM",
      channel_id: `community_chat:dm:${dm.id}`,
      channel_type: "dm",
      sender: { person_id: "bob" },
    });
  } finally {
    gw.proc.kill("SIGTERM");
    await gw.exited;
  }
});
