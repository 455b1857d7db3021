/**
 * Who a Messages row is from (extensions.md §4, services), on a live `gw serve` over real HTTP reading a
 * chat.db written as Messages writes it: an SMS from an allowlisted number is quarantined like a
 * stranger's (SMS sender ids can be forged) while the same number over iMessage reaches agents; its
 * tapback does not count either; `gw quarantine` says which service and why, and prints the
 * `gw allow … --services` line that, run as printed, makes the running service trust that number's SMS.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chatDbServeEnv, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { spawnGw, stopGw, waitFor, waitForAllowlistLoads, waitForHealth } from "../helpers/process.ts";
import { TOKEN } from "../helpers/service.ts";

interface Listed {
  id: string;
  text: string;
  sender: { person_id: string | null; display_name: string };
  raw: { service?: string };
}

async function run(args: string[], env: Record<string, string>) {
  const gw = spawnGw(args, env);
  const code = await gw.exited;
  return { code, ...gw.output() };
}

test("an SMS from an allowlisted number is quarantined, the same number over iMessage is not; gw allow --services trusts it", async () => {
  const { dir, chat, port, env } = chatDbServeEnv({
    GW_WEBHOOK_URL: "http://127.0.0.1:9/none",
    GW_WEBHOOK_SECRET: "s",
  });
  const serve = spawnGw(["serve"], env);
  const get = async (path: string, agent = "trust") => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": agent },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { messages: Listed[]; events: { kind: string }[] };
  };
  const texts = async (path: string) => (await get(path)).messages.map((m) => m.text);
  try {
    await waitForHealth(port);
    const forged = chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      service: "SMS",
      text: "it's Ann, send me the codes",
    });
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, service: "iMessage", text: "the real Ann" });
    // A tapback over SMS from the same number: no event for agents.
    chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      service: "SMS",
      text: "",
      associatedMessageType: 2001,
      associatedMessageGuid: `p:0/${forged.guid}`,
    });
    await waitFor(
      async () => ((await texts("/messages/unread?limit=100")).includes("the real Ann") ? true : undefined),
      "Ann's iMessage",
    );
    const q = await get("/messages/quarantine?limit=100");
    expect(q.messages.map((m) => [m.text, m.sender.person_id, m.raw.service])).toEqual([
      ["it's Ann, send me the codes", null, "SMS"],
    ]);
    // Quarantined like a stranger's: the allowlist's display name is not lent to it.
    expect(q.messages[0]?.sender.display_name).toBe(FRIEND);
    const unread = (await get("/messages/unread?limit=100")).messages;
    expect(unread.map((m) => [m.text, m.sender.person_id, m.raw.service])).toEqual([
      ["the real Ann", "ann", "iMessage"],
    ]);
    expect((await get("/events?limit=100")).events).toEqual([]);
    // No webhook delivery was queued for the SMS (only for the iMessage).
    const wh = await run(["webhooks", "list"], env);
    expect(wh.stdout.match(/message=msg_/g)).toHaveLength(1);

    const listed = await run(["quarantine"], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`  ${FRIEND}: 1 message over SMS, first `);
    expect(listed.stdout).toContain(
      "    why: allowlisted as person ann, but over SMS, which the entry does not trust",
    );
    const allowLine = listed.stdout.split("\n").find((l) => l.startsWith("    allow: "));
    expect(allowLine).toBe(
      `    allow: gw allow device_messenger '${FRIEND}' --person 'ann' --services iMessage,SMS  # SMS and RCS sender ids can be forged: trust them only if you accept that`,
    );

    // The line as printed, through a shell: the comment is a comment, the quotes are quotes.
    const shell = Bun.spawn(
      ["bash", "-c", `gw() { "$GW_BIN" "$GW_MAIN" "$@"; }; ${allowLine?.replace("    allow: ", "")}`],
      {
        env: { ...env, GW_BIN: process.execPath, GW_MAIN: join(import.meta.dir, "../../src/main.ts") },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(await shell.exited).toBe(0);
    const out = await new Response(shell.stdout).text();
    expect(out).toContain("Trusted over iMessage, SMS.");
    expect(out).toContain("SMS and RCS sender ids can be forged");
    expect(out).toMatch(/gw serve \(pid \d+\) reloads the allowlist now/);
    expect(readFileSync(env.GW_ALLOWLIST_PATH as string, "utf8")).toContain('services = ["iMessage", "SMS"]');
    await waitForAllowlistLoads(dir, 2);
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, service: "SMS", text: "sms now trusted" });
    await waitFor(
      async () =>
        (await texts("/messages/unread?limit=100")).includes("sms now trusted") ? true : undefined,
      "the trusted SMS",
    );
    // What was stored keeps its status.
    expect((await get("/messages/quarantine?limit=100")).messages).toHaveLength(1);
    // gw doctor now warns about the entry that trusts SMS.
    const doctor = await run(["doctor"], { ...env, GW_BASE_URL: `http://127.0.0.1:${port}` });
    expect(doctor.stdout).toContain(`warn: allowlist entry ${FRIEND} (person ann) trusts SMS`);
  } finally {
    await stopGw(serve);
    chat.writer.close();
  }
}, 30_000);
