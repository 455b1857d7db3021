/**
 * A permission prompt whose send failed is retried as a new send, not a replay of the failure
 * (extensions.md §4): the official MCP client plays Claude Code against `gw mcp --channel` with
 * GW_MCP_OWNER, the real service (real discord.js, logged in to the fake Discord) serves HTTP, and the fake
 * Discord refuses the prompt's first post. gw serve answers 502 PLATFORM_SEND_FAILED and keeps that answer
 * under the Idempotency-Key; the relay's next try comes under a new key, so the prompt reaches the owner,
 * whose answer is the verdict.
 */
import { afterAll, expect, test } from "bun:test";
import { startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import {
  PERMISSION_CAPABILITY,
  PERMISSION_METHOD,
  PERMISSION_REQUEST_METHOD,
} from "../../src/mcp/permission.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { closeAll, connectMcp } from "../helpers/mcp-client.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, serveOverHttp, TOKEN } from "../helpers/service.ts";

const fake = await startFakeDiscord();
const ann = fake.user({ username: "ann_user", global_name: "Ann" });
const annDm = fake.dm(ann);

afterAll(async () => {
  await closeAll();
  await fake.stop();
});

test("a prompt refused once by Discord (502, cached under its key) is re-sent under a new key and reaches the owner", async () => {
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
  /** POST /messages/send as gw serve saw and answered it. */
  const sends: { key: string | null; status: number; code: string | null }[] = [];
  const server = serveOverHttp(gw.svc.app, async (req, res) => {
    if (new URL(req.url).pathname !== "/messages/send") return undefined;
    const text = await res.text();
    const code = res.ok ? null : ((JSON.parse(text) as { error: { code: string } }).error.code ?? null);
    sends.push({ key: req.headers.get("idempotency-key"), status: res.status, code });
    return new Response(text, { status: res.status, headers: res.headers });
  });
  try {
    fake.message(annDm.id, { author: ann, content: "hi bot" });
    await waitFor(async () => {
      const res = await gw.request("GET", "/channels?person_id=ann", { headers: AGENT });
      const { channels } = (await res.json()) as { channels: unknown[] };
      return channels.length === 1 ? true : undefined;
    }, "Ann's DM seen by gw");

    const owner = await connectMcp(["--channel"], {
      GW_BEARER_TOKEN: TOKEN,
      GW_AGENT_ID: "claude-code",
      GW_BASE_URL: server.url,
      GW_MCP_OWNER: "ann",
    });
    expect(owner.client.getServerCapabilities()?.experimental).toHaveProperty(PERMISSION_CAPABILITY);
    const verdicts: unknown[] = [];
    const pushAlso = owner.client.fallbackNotificationHandler;
    owner.client.fallbackNotificationHandler = async (n) => {
      if (n.method === PERMISSION_METHOD) verdicts.push(n.params);
      else await pushAlso?.(n);
    };

    // Discord refuses the prompt's first post (a 400 is final: discord.js does not retry it).
    fake.fail({
      method: "POST",
      path: `/channels/${annDm.id}/messages`,
      status: 400,
      body: { code: 50035, message: "Invalid Form Body" },
      times: 1,
      when: (r) => String((r.body as { content?: unknown })?.content).includes("yes abcde"),
    });
    await owner.client.notification({
      method: PERMISSION_REQUEST_METHOD,
      params: {
        request_id: "abcde",
        tool_name: "Bash",
        description: "Run the tests",
        input_preview: "bun test",
      },
    });
    const posted = await waitFor(
      () => {
        const p = fake.posted.filter((x) => String(x.body.content).includes("yes abcde"));
        return p.length > 0 ? p : undefined;
      },
      "the prompt posted to Ann's DM",
      20_000,
    );
    expect(posted.map((p) => p.channelId)).toEqual([annDm.id]);
    const [first, second, ...more] = sends;
    expect(first).toMatchObject({ status: 502, code: "PLATFORM_SEND_FAILED" });
    expect(second).toMatchObject({ status: 200, code: null });
    expect(more).toEqual([]);
    expect(first?.key).toMatch(/^gw-permission:abcde:/);
    expect(second?.key).not.toBe(first?.key);
    expect(second?.key).toStartWith(first?.key as string);

    fake.message(annDm.id, { author: ann, content: "yes abcde" });
    await waitFor(() => (verdicts.length > 0 ? true : undefined), "the verdict", 15_000);
    expect(verdicts).toEqual([{ request_id: "abcde", behavior: "allow" }]);
    expect(fake.posted.filter((x) => String(x.body.content).includes("yes abcde"))).toHaveLength(1);
  } finally {
    server.stop();
  }
});
