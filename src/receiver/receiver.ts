/**
 * Builds the webhook receiver from its configuration and ports (the model is service.ts): the
 * seen-delivery set, the intake (journal + per-channel workers that run the agent) and the HTTP
 * handler. It does not listen and installs no signal handlers: `gw receiver` does that, and calls
 * `start` once it listens, which queues the journal's unfinished jobs before any new delivery. `stop`
 * ends the channel workers within a grace and logs the jobs that did not end: they run at the next start.
 */
import type { Config } from "../config/settings.ts";
import type { Clock, Logger, Spawner } from "../core/ports.ts";
import type { ReceiverJournal } from "../store/receiver-journal.ts";
import { VERSION } from "../version.ts";
import { createAgentRunner, KILL_GRACE_MS } from "./agent-run.ts";
import { createReceiverApp } from "./app.ts";
import { createIntake } from "./intake.ts";
import { createSeenSet } from "./seen-set.ts";

export const DEFAULT_AGENT_ID = "gw-receiver";

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
  const intake = createIntake({
    journal: p.journal,
    seen: createSeenSet(config.receiverSeenCapacity),
    run,
    queueMax: config.receiverQueueMax,
    idleTtlMs: config.receiverIdleWorkerTtlSeconds * 1000,
    clock: p.clock,
    log,
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

export type Receiver = ReturnType<typeof createReceiver>;
