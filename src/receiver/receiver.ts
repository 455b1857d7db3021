/**
 * Builds the webhook receiver from its configuration and ports (the model is service.ts): the
 * seen-delivery set, the intake (journal + per-channel workers that run the agent) and the HTTP
 * handler. It does not listen and installs no signal handlers: `gw receiver` does that, and calls
 * `start` once it listens, which queues the journal's unfinished jobs before any new delivery. `stop`
 * ends the channel workers within a grace and logs the jobs that did not end: they run at the next start.
 * The acknowledgement reactions and the phone commands' answers (extensions §7) reach gw serve over HTTP
 * (GW_BASE_URL, GW_BEARER_TOKEN), through the same client as `gw mcp`'s.
 */
import type { Config } from "../config/settings.ts";
import type { Clock, Logger, Spawner } from "../core/ports.ts";
import { createApiClient } from "../mcp/api-client.ts";
import type { ReceiverJournal } from "../store/receiver-journal.ts";
import { VERSION } from "../version.ts";
import { createAgentRunner, KILL_GRACE_MS } from "./agent-run.ts";
import { createReceiverApp } from "./app.ts";
import { createAnswerer } from "./command-answer.ts";
import { createIntake } from "./intake.ts";
import { createReactor } from "./reactions.ts";
import { createSeenSet } from "./seen-set.ts";

export const DEFAULT_AGENT_ID = "gw-receiver";
/** The deadline of one call to gw serve for a reaction or a command's answer. */
export const SERVICE_CALL_TIMEOUT_MS = 10_000;

export interface ReceiverPorts {
  config: Config;
  /** The receiver's environment: the agent gets an allowlisted part of it. */
  env: Record<string, string | undefined>;
  /** How this program starts itself, for the agent's `gw mcp`. */
  self: readonly string[];
  tmpDir: string;
  clock: Clock;
  log: Logger;
  spawner: Spawner;
  /** The journal at GW_RECEIVER_DB_PATH (store/receiver-journal.ts); the caller closes it after `stop`. */
  journal: ReceiverJournal;
  /** Between SIGTERM and SIGKILL of a stopped agent's process group; tests shorten it. */
  killGraceMs?: number;
  /** How the receiver reaches gw serve (reactions, command answers); the real fetch by default. */
  fetch?: typeof fetch;
}

export function createReceiver(p: ReceiverPorts) {
  const { config, log } = p;
  if (config.receiverAgentArgs !== null && config.receiverDangerous)
    log.warn(
      {},
      "GW_RECEIVER_DANGEROUS is Claude Code's flag and does nothing with GW_RECEIVER_AGENT_ARGS: put your agent's own flags in the arguments",
    );
  const run = createAgentRunner({
    agentBin: config.receiverAgentBin,
    agentArgs: config.receiverAgentArgs,
    promptFile: config.receiverAgentPromptFile,
    dangerous: config.receiverDangerous,
    timeoutMs: config.receiverAgentTimeoutSeconds * 1000,
    batched: config.receiverBatchMs > 0,
    self: p.self,
    baseUrl: config.baseUrl,
    token: config.bearerToken as string,
    agentId: config.agentId ?? DEFAULT_AGENT_ID,
    env: p.env,
    extraEnv: config.receiverAgentEnv ?? [],
    tmpDir: p.tmpDir,
    spawner: p.spawner,
    killGraceMs: p.killGraceMs ?? KILL_GRACE_MS,
    clock: p.clock,
    log,
  });
  const { reactor, answerer } = serviceCalls(p);
  const intake = createIntake({
    journal: p.journal,
    seen: createSeenSet(config.receiverSeenCapacity),
    run,
    queueMax: config.receiverQueueMax,
    idleTtlMs: config.receiverIdleWorkerTtlSeconds * 1000,
    clock: p.clock,
    log,
    batchMs: config.receiverBatchMs,
    reactor,
    ackEmoji: config.receiverAckEmoji,
    answerer: config.receiverCommands ? answerer : null,
  });
  const app = createReceiverApp({
    secret: config.webhookSecret as string,
    intake,
    clock: p.clock,
    log,
    version: VERSION,
  });
  let started = false;
  /** Queues the jobs a stop or crash left unfinished (once; the first delivery served calls it too). */
  const start = (): void => {
    if (started) return;
    started = true;
    const r = intake.recover();
    if (r.queued + r.givenUp > 0)
      log.warn(
        { queued: r.queued, interrupted: r.interrupted, given_up: r.givenUp },
        "running again the deliveries accepted before the last stop that did not end",
      );
  };
  return {
    fetch(req: Request): Promise<Response> {
      start();
      return app.fetch(req);
    },
    workers: intake.workers,
    start,
    async stop(graceMs: number): Promise<void> {
      const { notRun, stopped } = await intake.stop(graceMs);
      await Promise.all([reactor.stop(), answerer.stop()]);
      for (const job of [...stopped, ...notRun])
        log.warn(
          { delivery_id: job.deliveryId, channel_id: job.envelope.channel_id, message_id: job.envelope.id },
          stopped.includes(job)
            ? "stopped at shutdown; it runs again at the next start"
            : "not run before shutdown; it runs at the next start",
        );
    },
  };
}

/**
 * The reactor and the command answerer over one gw serve client. A reaction the reactor took back is
 * forgotten by the journal; one it could not stays there for the next start.
 */
function serviceCalls(p: ReceiverPorts) {
  const api = createApiClient({
    baseUrl: p.config.baseUrl,
    token: p.config.bearerToken as string,
    agentId: p.config.agentId ?? DEFAULT_AGENT_ID,
    fetch: p.fetch ?? fetch,
    timeoutMs: SERVICE_CALL_TIMEOUT_MS,
  });
  const reactor = createReactor({
    api,
    log: p.log,
    onGone: (deliveryId) => {
      try {
        p.journal.setReaction(deliveryId, null);
      } catch (err) {
        p.log.warn({ delivery_id: deliveryId, err: String(err) }, "a taken-back reaction not journaled");
      }
    },
  });
  return { reactor, answerer: createAnswerer({ api, log: p.log }) };
}

export type Receiver = ReturnType<typeof createReceiver>;
