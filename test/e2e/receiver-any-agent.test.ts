/**
 * `gw receiver` as a process running an agent that is not Claude Code (GW_RECEIVER_AGENT_ARGS): the
 * README's "Any other agent" example, taken from the README itself, answers a Discord message through
 * gw serve's HTTP API (curl and jq; skipped where they are missing) and marks it read; and a value that is
 * not a JSON array of strings stops `gw receiver` with exit 2, naming the variable and the fix.
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { killAfterEach } from "../helpers/gw-processes.ts";
import { ROOT, spawnGw, waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { chainReady, chainSetup, spawnChain, unreadOfReceiver } from "../helpers/webhook-chain.ts";

const SECRET = "any-agent-secret-0123456789abcdef";
// Killed before the fakes stop (afterEach hooks run in the order they were registered).
const procs = killAfterEach();
const discords = fakeDiscords();

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
    const { fake, ann, general } = await discords.home();
    const dir = tempDir();
    mkdirSync(join(dir, "bin"));
    const agentPath = join(dir, "bin/echo-agent.sh");
    writeFileSync(agentPath, script);
    chmodSync(agentPath, 0o755);
    const chain = chainSetup(fake, ann.id, SECRET, {
      dir,
      receiverEnv: { GW_RECEIVER_AGENT_BIN: agentPath, GW_RECEIVER_AGENT_ARGS: "[]" },
    });
    const { serve, receiver } = spawnChain(chain);
    procs.push(serve, receiver);
    await chainReady(chain);

    // Shell syntax in the text stays text: it only ever passes through jq into a request body.
    const text = 'hello "there" $(touch pwned) `id`';
    fake.message(general.id, { author: ann, content: text });
    await waitFor(() => (fake.posted.length === 1 ? true : undefined), "the echo on Discord", 20_000);
    expect(fake.posted[0]?.body.content).toBe(`echo: ${text}`);
    await waitFor(
      () => (receiver.output().stderr.includes("agent run done") ? true : undefined),
      "the run to end",
    );
    expect(await unreadOfReceiver(chain)).toEqual([]);

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
