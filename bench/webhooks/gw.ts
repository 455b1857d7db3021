/**
 * bench/webhooks/webhooks.ts's gateway, built as `gw serve` builds it in a temp directory (loadConfig over an
 * explicit environment, createService with the system clock, a logger counting warnings, no connectors,
 * start()), but for its `fetch` port: a pass-through noting when the dispatcher calls fetch for a
 * delivery and waking its waiter once answered. Plus the messages and the raw baseline's signed POSTs.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatProblems, loadConfig } from "../../src/config/load.ts";
import { createIdFactory } from "../../src/core/ids.ts";
import { type Logger, systemClock } from "../../src/core/ports.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { createService, publicBaseUrl } from "../../src/service.ts";
import { toEnvelope } from "../../src/store/envelope.ts";
import { signedHeaders } from "../../src/webhooks/sign.ts";
import { isolatedEnv } from "../../test/helpers/process.ts";
import { now } from "../lib/child-protocol.ts";
import { messageRow } from "../lib/seed.ts";
import type { Sink } from "../lib/sink.ts";
import { allowlistToml, silentLogger } from "../lib/world.ts";
import { progress, SECRET, SOURCE, TIMEOUT_MS } from "./settings.ts";

const SENDERS = Array.from({ length: 4 }, (_, i) => ({
  id: `+1555010${String(i).padStart(4, "0")}`,
  person: `person-${i}`,
  name: `Friend ${i}`,
}));

function writeAllowlist(dir: string): void {
  writeFileSync(
    join(dir, "allowlist.toml"),
    allowlistToml(
      SENDERS.flatMap((s, i) => [
        { source: SOURCE, id: s.id, person_id: s.person, display_name: s.name },
        // the same person on the other source, so gw logs no single-use person_id warning
        {
          source: "community_chat" as const,
          id: String(900_000_000_000_000_000n + BigInt(i)),
          person_id: s.person,
          display_name: null,
        },
      ]),
    ),
  );
}

/** A logger that drops info and counts warnings and errors (the first five are shown). */
function countingLogger() {
  let warnings = 0;
  const note = (kind: string) => (obj: object, msg?: string) => {
    warnings += 1;
    if (warnings <= 5) progress(`gw ${kind}: ${msg ?? ""} ${JSON.stringify(obj)}`);
  };
  const log: Logger = {
    debug() {},
    info() {},
    warn: note("warn"),
    error: note("error"),
    child: () => silentLogger,
  };
  return { log, warnings: () => warnings };
}

/** The service's fetch: notes when the dispatcher called fetch for a delivery id, and wakes its waiter. */
function passThrough() {
  const fetchCalledAt = new Map<string, number>();
  const answered = new Map<string, () => void>();
  const passThroughFetch = ((input: string | URL | Request, init?: RequestInit) => {
    const id = (init?.headers as Record<string, string> | undefined)?.["x-gw-delivery-id"];
    if (id) fetchCalledAt.set(id, now());
    const p = fetch(input, init);
    if (id) {
      const done = answered.get(id);
      if (done) p.finally(done).catch(() => {});
    }
    return p;
  }) as unknown as typeof fetch;
  return { fetchCalledAt, answered, passThroughFetch };
}

/** Builds and starts the service in `dir`, delivering to `webhookUrl`. */
export async function startGateway(dir: string, webhookUrl: string) {
  writeAllowlist(dir);
  const env = isolatedEnv(dir, {
    GW_BEARER_TOKEN: `bench-${crypto.randomUUID()}`,
    GW_BIND_HOST: "127.0.0.1",
    GW_CHAT_DB_PATH: join(dir, "chat.db"),
    GW_WEBHOOK_URL: webhookUrl,
    GW_WEBHOOK_SECRET: SECRET,
  });
  const host = { platform: process.platform, homeDir: dir, cwd: dir };
  const loaded = loadConfig(env, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const config = loaded.config;
  const { log, warnings } = countingLogger();
  const { fetchCalledAt, answered, passThroughFetch } = passThrough();
  const service = createService({
    config,
    clock: systemClock,
    log,
    host,
    connectors: () => ({}),
    fetch: passThroughFetch,
  });
  await service.start();
  if (!service.dispatcher) throw new Error("the dispatcher was not built: GW_WEBHOOK_URL/SECRET not taken");
  return { config, service, fetchCalledAt, answered, warnings };
}

export type Gateway = Awaited<ReturnType<typeof startGateway>>;

const TEXTS = [
  "running late, be there in 10",
  "can you send me the file from yesterday's meeting? the one with the budget numbers",
  "ok sounds good",
  "where are we meeting tonight? I thought the place on 5th but not sure anymore",
];

/**
 * The messages given to gw (`message`, numbered across the run), the Envelope JSON the dispatcher would
 * send for one, built in memory (`rawBody`), and one raw POST exactly as the dispatcher's post()
 * (`rawPost`: signed per request, same fetch options).
 */
export function messageKit(config: Gateway["config"], webhookUrl: string) {
  let seq = 0;
  /** `k` picks the text, so the gateway and the raw baseline send the same mix of body sizes. */
  const message = (channel: number, tag: string, k: number): NormalizedMessage => {
    seq += 1;
    const sender = SENDERS[seq % SENDERS.length] as (typeof SENDERS)[number];
    const id = `chat${900_000 + channel}`;
    return {
      source: SOURCE,
      platformId: `bench-${tag}-${seq}-${crypto.randomUUID()}`,
      channel: { id, type: "group", platformRef: `iMessage;+;${id}` },
      sender: { id: sender.id, displayName: sender.id },
      service: "iMessage",
      text: `${TEXTS[k % TEXTS.length]} #${seq}`,
      replyToPlatformId: null,
      timestampMs: Date.now(),
      attachments: [],
      raw: { ROWID: seq, guid: `${crypto.randomUUID()}`.toUpperCase(), service: "iMessage" },
      direction: "inbound",
    };
  };
  const rawIds = createIdFactory(systemClock);
  const baseUrl = publicBaseUrl(config.bindHost, config.bindPort);
  const rawBody = (m: NormalizedMessage): string => {
    const sender = SENDERS.find((s) => s.id === m.sender.id);
    const entry = sender ? { display_name: sender.name, person_id: sender.person } : null;
    const row = messageRow(m, rawIds.message(), entry, { createdAt: Date.now() });
    return JSON.stringify(toEnvelope(row, [], baseUrl));
  };
  const rawPost = async (id: string, body: string): Promise<number> => {
    const headers = signedHeaders(SECRET, id, Math.floor(Date.now() / 1000), body);
    const res = await fetch(webhookUrl, {
      method: "POST",
      headers: { ...headers },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.status;
  };
  return { message, rawBody, rawPost };
}

export type MessageKit = ReturnType<typeof messageKit>;

/** What both phases work with: the sink, the gateway and the messages. */
export interface Bench {
  sink: Sink;
  gw: Gateway;
  kit: MessageKit;
}
