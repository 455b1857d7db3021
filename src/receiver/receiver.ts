/**
 * Builds the webhook receiver from its configuration and ports (the model is service.ts): the
 * seen-delivery set, the per-channel dispatcher that runs the agent, and the HTTP handler. It does not
 * listen and installs no signal handlers: `gw receiver` does that. `stop` ends the dispatcher within a
 * grace and logs the deliveries that did not run (their messages stay unread at the service).
 */
import type { Config } from "../config/settings.ts";
import type { Clock, Logger, Spawner } from "../core/ports.ts";
import { VERSION } from "../version.ts";
import { createAgentRunner, KILL_GRACE_MS } from "./agent-run.ts";
import { createReceiverApp } from "./app.ts";
import { createDispatcher } from "./dispatcher.ts";
import { createSeenSet } from "./seen-set.ts";

export const DEFAULT_AGENT_ID = "gw-receiver";

export interface ReceiverPorts {
  config: Config;
  /** The receiver's own environment: the agent gets an allowlisted part of it. */
  env: Record<string, string | undefined>;
  /** How this program starts itself, for the agent's `gw mcp`. */
  self: readonly string[];
  tmpDir: string;
  clock: Clock;
  log: Logger;
  spawner: Spawner;
  /** Between SIGTERM and SIGKILL of a stopped agent's process group; tests shorten it. */
  killGraceMs?: number;
}

export function createReceiver(p: ReceiverPorts) {
  const { config, log } = p;
  const run = createAgentRunner({
    agentBin: config.receiverAgentBin,
    promptFile: config.receiverAgentPromptFile,
    dangerous: config.receiverDangerous,
    timeoutMs: config.receiverAgentTimeoutSeconds * 1000,
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
  const dispatcher = createDispatcher({ run, idleTtlMs: config.receiverIdleWorkerTtlSeconds * 1000, log });
  const app = createReceiverApp({
    secret: config.webhookSecret as string,
    seen: createSeenSet(config.receiverSeenCapacity),
    dispatcher,
    clock: p.clock,
    log,
    version: VERSION,
  });
  return {
    fetch: app.fetch,
    dispatcher,
    async stop(graceMs: number): Promise<void> {
      const { notRun, stopped } = await dispatcher.stop(graceMs);
      for (const job of [...stopped, ...notRun])
        log.warn(
          { delivery_id: job.deliveryId, channel_id: job.envelope.channel_id, message_id: job.envelope.id },
          stopped.includes(job)
            ? "stopped at shutdown; its message stays unread at the service"
            : "not run before shutdown; its message stays unread at the service",
        );
    },
  };
}

export type Receiver = ReturnType<typeof createReceiver>;
