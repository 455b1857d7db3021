/**
 * `gw receiver`: the composition root of the webhook receiver (spec I). Requires GW_BEARER_TOKEN,
 * GW_WEBHOOK_SECRET and an agent program that exists (exit 2 naming what is missing). Opens the journal
 * (GW_RECEIVER_DB_PATH), listens, then queues the journal's unfinished jobs. It ends as lifecycle.ts says.
 */
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute } from "node:path";
import { bunServeOptions } from "../core/http-edge.ts";
import { systemClock } from "../core/ports.ts";
import { bunSpawner } from "../core/spawn.ts";
import { createReceiver, DEFAULT_AGENT_ID } from "../receiver/receiver.ts";
import { openReceiverJournal, type ReceiverJournal } from "../store/receiver-journal.ts";
import { VERSION } from "../version.ts";
import { type CommandContext, CommandError, EXIT_CONFIG } from "./exit.ts";
import { superviseProcess } from "./lifecycle.ts";
import { selfCommand } from "./self.ts";
import { configOf, loggerOf } from "./setup.ts";

/**
 * On SIGINT/SIGTERM the receiver stops accepting, lets running agents finish within this, stops the rest
 * (they stay unfinished in the journal and run at the next start) and closes the journal.
 */
export const SHUTDOWN_GRACE_MS = 10_000;
/** Beyond the agents' grace, the rest of the stop (killing late agents' groups, logging) gets this long. */
export const STOP_MARGIN_MS = 5_000;

export async function receiver(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx, { required: ["bearerToken", "webhookSecret"] });
  const bin = config.receiverAgentBin;
  const found = isAbsolute(bin) ? existsSync(bin) : Bun.which(bin, { PATH: ctx.env.PATH ?? "" }) !== null;
  if (!found)
    throw new CommandError(
      `configuration error: GW_RECEIVER_AGENT_BIN ${JSON.stringify(bin)} is not found${isAbsolute(bin) ? "" : " on PATH"}. ` +
        "Fix: install Claude Code (npm install -g @anthropic-ai/claude-code) or point GW_RECEIVER_AGENT_BIN at your agent program.",
      EXIT_CONFIG,
    );
  const log = await loggerOf(config, ctx, "receiver");
  let journal: ReceiverJournal;
  try {
    journal = openReceiverJournal(config.receiverDbPath);
  } catch (err) {
    throw new CommandError(
      `gw receiver: cannot open its journal ${config.receiverDbPath} (${(err as Error).message}). ` +
        "Fix its permissions or set GW_RECEIVER_DB_PATH to a writable file.",
    );
  }
  const receiver = createReceiver({
    config,
    env: ctx.env,
    self: selfCommand(),
    tmpDir: tmpdir(),
    clock: systemClock,
    log,
    spawner: bunSpawner,
    journal,
    fetch,
  });

  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: config.receiverBindHost,
      port: config.receiverBindPort,
      reusePort: false,
      ...bunServeOptions(log),
      fetch: receiver.fetch,
    });
  } catch (err) {
    journal.close();
    throw new CommandError(
      `gw receiver: cannot listen on ${config.receiverBindHost}:${config.receiverBindPort} (${(err as Error).message}). ` +
        "Is another receiver running? Set GW_RECEIVER_BIND_PORT to a free port.",
    );
  }
  log.info(
    {
      version: VERSION,
      agent: bin,
      agent_id: config.agentId ?? DEFAULT_AGENT_ID,
      dangerous: config.receiverDangerous,
      journal: config.receiverDbPath,
      ack_emoji: config.receiverAckEmoji,
      batch_ms: config.receiverBatchMs,
      commands: config.receiverCommands,
    },
    `gw receiver listening on http://${config.receiverBindHost}:${server.port}/webhook`,
  );
  // Before any request is served (they wait for this turn of the event loop), so recovered jobs come
  // first in their channels.
  receiver.start();

  const life = superviseProcess({
    events: process,
    log,
    // The agents' grace, then a little for the log lines and the server.
    stopDeadlineMs: SHUTDOWN_GRACE_MS + STOP_MARGIN_MS,
    stop: async () => {
      log.info({}, "no new deliveries; running agents get a grace");
      await server.stop();
      await receiver.stop(SHUTDOWN_GRACE_MS);
      journal.close();
    },
  });
  return await life.done;
}
