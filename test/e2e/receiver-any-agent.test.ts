/**
 * `gw receiver` as a process running an agent that is not Claude Code (GW_RECEIVER_AGENT_ARGS): the
 * README's "Any other agent" example, taken from the README itself, answers a Discord message through
 * gw serve's HTTP API (curl and jq; skipped where they are missing) and marks it read; and a value that is
 * not a JSON array of strings stops `gw receiver` with exit 2, naming the variable and the fix.
 */
import { afterEach, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_BOT_TOKEN, type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import {
  freePort,
  type GwProcess,
  isolatedEnv,
  ROOT,
  spawnGw,
  waitFor,
  waitForHealth,
} from "../helpers/process.ts";
import { allowAnn } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

const SECRET = "any-agent-secret-0123456789abcdef";
const fakes: FakeDiscord[] = [];
const procs: GwProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.proc.kill("SIGKILL");
    await p.exited;
  }
  for (const f of fakes.splice(0)) await f.stop();
});

/** The first `#!/bin/sh` block of the README's "Any other agent" section, as the README prints it. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Any other agent"));
  const start = section.indexOf("```sh\n#!/bin/sh\n") + "```sh\n".length;
  return section.slice(start, section.indexOf("```", start));
}

test.skipIf(!Bun.which("jq") || !Bun.which("curl"))(
  "the README's echo agent, run by gw receiver with GW_RECEIVER_AGENT_ARGS='[]', answers through gw serve and marks read",
  async () => {
    const script = readmeExample();
    expect(script).toStartWith("#!/bin/sh\n");
    const fake = await startFakeDiscord();
    fakes.push(fake);
    const ann = fake.user({ username: "ann", global_name: "Ann" });
    const general = fake.channel(fake.guild({ name: "Home" }).id, { name: "general" });

    const dir = tempDir();
    mkdirSync(join(dir, "serve"));
    mkdirSync(join(dir, "bin"));
    const agentPath = join(dir, "bin/echo-agent.sh");
    writeFileSync(agentPath, script);
    chmodSync(agentPath, 0o755);
    const servePort = freePort();
    const receiverPort = freePort();
    const serveEnv = isolatedEnv(join(dir, "serve"), {
      GW_BIND_PORT: String(servePort),
      GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
      GW_COMMUNITY_API_URL: fake.apiUrl,
      GW_WEBHOOK_URL: `http://127.0.0.1:${receiverPort}/webhook`,
      GW_WEBHOOK_SECRET: SECRET,
    });
    writeFileSync(serveEnv.GW_ALLOWLIST_PATH as string, allowAnn(ann.id));
    const receiverEnv = {
      HOME: join(dir, "receiver"),
      GW_BEARER_TOKEN: serveEnv.GW_BEARER_TOKEN as string,
      GW_WEBHOOK_SECRET: SECRET,
      GW_LOG_DIR: join(dir, "receiver/logs"),
      GW_RECEIVER_BIND_PORT: String(receiverPort),
      GW_RECEIVER_AGENT_BIN: agentPath,
      GW_RECEIVER_AGENT_ARGS: "[]",
      GW_BASE_URL: `http://127.0.0.1:${servePort}`,
    };
    const serve = spawnGw(["serve"], serveEnv);
    const receiver = spawnGw(["receiver"], receiverEnv);
    procs.push(serve, receiver);
    await waitFor(async () => {
      const h = (await waitForHealth(servePort)) as { connectors: { community_chat: { state: string } } };
      return h.connectors.community_chat.state === "ok" ? true : undefined;
    }, "gw serve connected to Discord");
    await waitForHealth(receiverPort);

    // Shell syntax in the text stays text: it only ever passes through jq into a request body.
    const text = 'hello "there" $(touch pwned) `id`';
    fake.message(general.id, { author: ann, content: text });
    await waitFor(() => (fake.posted.length === 1 ? true : undefined), "the echo on Discord", 20_000);
    expect(fake.posted[0]?.body.content).toBe(`echo: ${text}`);
    await waitFor(
      () => (receiver.output().stderr.includes("agent run done") ? true : undefined),
      "the run to end",
    );
    const res = await fetch(`http://127.0.0.1:${servePort}/messages/unread`, {
      headers: { authorization: `Bearer ${serveEnv.GW_BEARER_TOKEN}`, "x-agent-id": "gw-receiver" },
    });
    expect(((await res.json()) as { messages: unknown[] }).messages).toEqual([]);

    receiver.proc.kill("SIGTERM");
    expect(await receiver.exited).toBe(0);
    expect(receiver.output().stderr).not.toContain(SECRET);
    expect(receiver.output().stderr).not.toContain("agent run failed");
  },
  60_000,
);

test("GW_RECEIVER_AGENT_ARGS that is not a JSON array of strings: exit 2, naming the variable and the fix", async () => {
  const dir = tempDir();
  const base = {
    HOME: dir,
    GW_BEARER_TOKEN: "t",
    GW_WEBHOOK_SECRET: "s",
    GW_LOG_DIR: join(dir, "logs"),
    GW_RECEIVER_AGENT_BIN: "/bin/sh",
  };
  for (const [value, problem] of [
    ["run --quiet", "is not JSON"],
    ['["run", 1]', "has an entry that is not a string"],
  ]) {
    const p = spawnGw(["receiver"], { ...base, GW_RECEIVER_AGENT_ARGS: value as string });
    expect(await p.exited).toBe(2);
    const err = p.output().stderr;
    expect(err).toContain(`configuration error: GW_RECEIVER_AGENT_ARGS=${JSON.stringify(value)} ${problem}`);
    expect(err).toContain('Fix: write the arguments as a JSON array of strings, e.g. ["run", "--quiet"]');
  }
});
