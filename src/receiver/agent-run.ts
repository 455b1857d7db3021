/**
 * One agent run (runner). The system prompt is read fresh from the prompt file (else the bundled default).
 * The run's working directory is a private folder (0700) holding the files agentLaunch names (the MCP
 * config, and the prompt for an agent with its own arguments; 0600), so no project file around the receiver
 * is picked up; it is removed after the run. Failures are logged, never returned to the sender; a run
 * resolves to its RunOutcome, where `stopped` means the abort signal (shutdown) ended it and
 * `cancelled-by-stop` that a /stop did (channel-workers.ts STOP_REASON).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Clock, Logger, Spawner } from "../core/ports.ts";
import { agentEnv, agentInput, agentLaunch, batchInput, mcpConfig } from "./agent-command.ts";
import { type Run, STOP_REASON } from "./channel-workers.ts";
import { DEFAULT_PROMPT } from "./default-prompt.ts";

/**
 * The agent's output is logged at debug (it may quote message text) and its stderr as a warning when it
 * failed, each capped at this.
 */
export const OUTPUT_LOG_CAP = 8 * 1024;
/** How long the agent's process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5_000;

export type RunOutcome = "done" | "failed" | "timed-out" | "stopped" | "cancelled-by-stop";

export interface AgentRunDeps {
  agentBin: string;
  /** The agent's own arguments (GW_RECEIVER_AGENT_ARGS), or null for Claude Code's flags. */
  agentArgs: readonly string[] | null;
  promptFile: string;
  dangerous: boolean;
  timeoutMs: number;
  /** GW_RECEIVER_BATCH_MS is set: stdin holds a JSON array of envelopes, even of one. */
  batched: boolean;
  /** How this program starts itself (the MCP server is `<self> mcp`). */
  self: readonly string[];
  baseUrl: string;
  token: string;
  agentId: string;
  /** The receiver's environment, and the extra names the owner lets through to the agent. */
  env: Record<string, string | undefined>;
  extraEnv: readonly string[];
  tmpDir: string;
  spawner: Spawner;
  killGraceMs: number;
  clock: Clock;
  log: Logger;
}

export function createAgentRunner(deps: AgentRunDeps) {
  const readPrompt = (): string => {
    try {
      return readFileSync(deps.promptFile, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        deps.log.warn(
          { file: deps.promptFile, err: String(err) },
          "prompt file unreadable; using the default",
        );
      return DEFAULT_PROMPT;
    }
  };
  const env = agentEnv(deps.env, deps.extraEnv, { baseUrl: deps.baseUrl, agentId: deps.agentId });

  return async (run: Run, signal: AbortSignal): Promise<RunOutcome> => {
    const job = run.jobs[0];
    if (!job) return "done";
    const dir = mkdtempSync(join(deps.tmpDir, "gw-agent-"));
    try {
      const launch = agentLaunch({
        agentBin: deps.agentBin,
        agentArgs: deps.agentArgs,
        dangerous: deps.dangerous,
        systemPrompt: readPrompt(),
        mcpConfig: mcpConfig({
          self: deps.self,
          baseUrl: deps.baseUrl,
          token: deps.token,
          agentId: deps.agentId,
        }),
        dir,
        env,
      });
      for (const f of launch.files) writeFileSync(f.path, f.content, { mode: 0o600 });
      const startedAt = deps.clock.now();
      const r = await deps.spawner.run(launch.argv, {
        stdin: stdinOf(run, deps.batched),
        timeoutMs: deps.timeoutMs,
        env: launch.env,
        cwd: dir,
        killGraceMs: deps.killGraceMs,
        signal,
      });
      const line = {
        delivery_id: job.deliveryId,
        ...(run.jobs.length > 1 ? { batch: run.jobs.map((j) => j.deliveryId) } : {}),
        channel_id: job.envelope.channel_id,
        waited_ms: startedAt - job.receivedAt,
        ran_ms: deps.clock.now() - startedAt,
        exit_code: r.exitCode,
        signal: r.signal,
        stdout_bytes: r.stdout.length,
      };
      deps.log.debug(
        { delivery_id: job.deliveryId, stdout: r.stdout.slice(0, OUTPUT_LOG_CAP) },
        "agent output",
      );
      if (r.timedOut && signal.aborted && signal.reason === STOP_REASON) {
        deps.log.warn(line, "agent run stopped by /stop");
        return "cancelled-by-stop";
      }
      if (r.timedOut && signal.aborted) {
        deps.log.warn(line, "agent run stopped (shutting down)");
        return "stopped";
      }
      if (r.timedOut) {
        deps.log.warn(line, "agent run passed its time budget and was stopped");
        return "timed-out";
      }
      if (r.exitCode !== 0) {
        deps.log.warn({ ...line, stderr: r.stderr.slice(0, OUTPUT_LOG_CAP) }, "agent run failed");
        return "failed";
      }
      deps.log.info(line, "agent run done");
      return "done";
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** The run's stdin: one envelope as the spec has it, or (batching on, or a batch taken back) an array. */
function stdinOf(run: Run, batched: boolean): string {
  const [job] = run.jobs;
  const recovered = run.jobs.find((j) => j.recovered)?.recovered;
  const notes = { fresh: run.fresh, ...(recovered ? { recovered } : {}) };
  if (job && run.jobs.length === 1 && !batched)
    return agentInput(job.deliveryId, job.envelope, job.recovered, { fresh: run.fresh });
  return batchInput(run.jobs, notes);
}
