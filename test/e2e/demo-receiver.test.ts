/**
 * `gw demo --webhook-url` feeds a real `gw receiver` (issue 31): the banner prints the webhook secret and the
 * receiver's command line; run as printed (with the fake agent as GW_RECEIVER_AGENT_BIN), the receiver
 * verifies the demo's deliveries and runs the agent on the friend's messages, never on the stranger's.
 */
import { expect, test } from "bun:test";
import { freePort, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { fakeAgentProgram } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/temp.ts";

test("the demo's webhooks reach a real gw receiver started from the banner's lines", async () => {
  const port = freePort();
  const receiverPort = freePort();
  const home = tempDir();
  const demo = spawnGw(
    ["demo", "--interval", "0.2", "--webhook-url", `http://127.0.0.1:${receiverPort}/webhook`],
    { HOME: home, GW_BIND_PORT: String(port) },
  );
  const agentDir = tempDir();
  const agent = fakeAgentProgram(agentDir);
  let receiver: ReturnType<typeof Bun.spawn> | null = null;
  try {
    const banner = await waitFor(
      () => (demo.output().stdout.includes("Press Ctrl-C") ? demo.output().stdout : undefined),
      "the banner",
    );
    expect(banner).not.toContain("built-in receiver");
    const from = banner.indexOf("  export GW_WEBHOOK_SECRET=");
    expect(from).toBeGreaterThan(0);
    // The printed lines: the export, then the receiver's command line (continued with a backslash).
    const lines = banner.slice(from).split("\n").slice(0, 3).join("\n");
    expect(lines).toMatch(
      /export GW_WEBHOOK_SECRET=[0-9a-f]{64}\n +GW_BEARER_TOKEN=\S+ GW_BASE_URL=\S+ GW_RECEIVER_BIND_PORT=\d+ \\\n +.+ receiver$/,
    );
    receiver = Bun.spawn(["bash", "-c", lines], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: agentDir,
        GW_LOG_DIR: `${agentDir}/logs`,
        GW_RECEIVER_AGENT_BIN: agent.bin,
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    await waitForHealth(receiverPort);
    const ran = await waitFor(
      () => {
        const starts = agent.records().filter((r) => r.event === "start");
        return starts.length >= 2 ? starts : undefined;
      },
      "agent runs for the friend's messages",
      20_000,
    );
    const texts = ran.map((r) => String(r.stdin));
    expect(texts.some((t) => t.includes("Demo Friend"))).toBe(true);
    expect(texts.every((t) => !t.includes("bank details") && !t.includes("Free Nitro"))).toBe(true);
  } finally {
    receiver?.kill("SIGTERM");
    await receiver?.exited;
    demo.proc.kill("SIGTERM");
    await demo.exited;
  }
}, 60_000);
