/**
 * The chain users run, for the e2e tests: `gw serve` logged in to a fake Discord with Ann allowlisted,
 * pushing signed webhooks to a `gw receiver` whose agent is the fake agent (test/helpers/fake-agent.ts).
 * `chainSetup` makes the folders, ports, environments and allowlist (options: the caller's folder, more
 * serve or receiver environment, e.g. another agent, another allowlist); `spawnChain` starts both processes
 * (the compiled binary with `binary`) and hands them back at once, so the caller can stop them whatever
 * happens next; `chainReady` resolves once serve's Discord connector (or the connectors named) is ok and
 * the receiver answers; `unreadOfReceiver` is what serve still holds unread for the receiver's agent id.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_BOT_TOKEN, type FakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { allowAnn } from "./allowlist.ts";
import { fakeAgentProgram } from "./fake-agent.ts";
import { freePort, isolatedEnv, spawnGw, waitForConnectors, waitForHealth } from "./process.ts";
import { tempDir } from "./temp.ts";

export type Chain = ReturnType<typeof chainSetup>;

export interface ChainOptions {
  /** The folder to build in (one the caller has written to first); a new temporary folder otherwise. */
  dir?: string;
  /** Added to gw serve's environment, last. */
  serveEnv?: Record<string, string>;
  /** The allowlist's text, instead of Ann's entry. */
  allowlist?: string;
  /** Added to gw receiver's environment, last: another agent (GW_RECEIVER_AGENT_BIN, _ARGS), settings. */
  receiverEnv?: Record<string, string>;
}

export function chainSetup(fake: FakeDiscord, annId: string, secret: string, opts: ChainOptions = {}) {
  const dir = opts.dir ?? tempDir();
  mkdirSync(join(dir, "serve"));
  const servePort = freePort();
  const receiverPort = freePort();
  const serveUrl = `http://127.0.0.1:${servePort}`;
  const serveEnv = isolatedEnv(join(dir, "serve"), {
    GW_BIND_PORT: String(servePort),
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
    GW_WEBHOOK_URL: `http://127.0.0.1:${receiverPort}/webhook`,
    GW_WEBHOOK_SECRET: secret,
    ...opts.serveEnv,
  });
  writeFileSync(serveEnv.GW_ALLOWLIST_PATH as string, opts.allowlist ?? allowAnn(annId));
  const agent = fakeAgentProgram(dir);
  const receiverEnv: Record<string, string> = {
    HOME: join(dir, "receiver"),
    GW_BEARER_TOKEN: serveEnv.GW_BEARER_TOKEN as string,
    GW_WEBHOOK_SECRET: secret,
    GW_LOG_DIR: join(dir, "receiver/logs"),
    GW_RECEIVER_BIND_PORT: String(receiverPort),
    GW_RECEIVER_AGENT_BIN: agent.bin,
    GW_BASE_URL: serveUrl,
    ...opts.receiverEnv,
  };
  return { dir, servePort, receiverPort, serveUrl, serveEnv, receiverEnv, agent };
}

export function spawnChain(chain: Chain, opts: { binary?: boolean } = {}) {
  const serve = spawnGw(["serve"], chain.serveEnv, opts);
  const receiver = spawnGw(["receiver"], chain.receiverEnv, opts);
  return { serve, receiver };
}

/** Waits for serve's Discord connector (or each of `connectors` in its state) and the receiver. */
export async function chainReady(chain: Chain, connectors?: Record<string, string>): Promise<void> {
  if (connectors) await waitForConnectors(chain.servePort, connectors);
  else await waitForConnectors(chain.servePort, { community_chat: "ok" }, "gw serve connected to Discord");
  await waitForHealth(chain.receiverPort);
}

/** GET /messages/unread on serve as the receiver's agent id (`query` e.g. "limit=100"): the messages. */
export async function unreadOfReceiver<T = unknown>(chain: Chain, query = ""): Promise<T[]> {
  const res = await fetch(`${chain.serveUrl}/messages/unread${query ? `?${query}` : ""}`, {
    headers: { authorization: `Bearer ${chain.serveEnv.GW_BEARER_TOKEN}`, "x-agent-id": "gw-receiver" },
  });
  return ((await res.json()) as { messages: T[] }).messages;
}
