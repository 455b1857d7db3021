/**
 * `gw mcp`: the four agent tools (nine with --extended) over MCP stdio. stdout carries protocol frames only; logs go to stderr and
 * the log file. Needs GW_BEARER_TOKEN; GW_AGENT_ID names the agent (without it, per-agent tools answer
 * AGENT_ID_REQUIRED); GW_BASE_URL points at `gw serve`. Ends when the client closes stdin, or as lifecycle.ts
 * says. With GW_MCP_CHANNEL=1 or `--channel` it is also a Claude Code channel (mcp/channel.ts), which needs
 * GW_AGENT_ID (exit 2 without it). GW_MCP_EXTENDED=1 or `--extended` (implied by a channel) adds the five
 * tools of extensions.md §2; get_attachment's cache lives under the OS temp dir, per user, and its copies of
 * deleted messages are removed (mcp/attachment-purge.ts: checked at start and on each `message.deleted`, from
 * the channel's events follower or, without a channel, one of its own). A channel with GW_MCP_OWNER relays
 * permission prompts to the owner's phone (extensions.md §3, mcp/permission-relay.ts).
 */
import { tmpdir, userInfo } from "node:os";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Config } from "../config/settings.ts";
import { childEnv } from "../core/child-env.ts";
import { pause } from "../core/deadline.ts";
import { type Logger, systemClock } from "../core/ports.ts";
import { bunSpawner } from "../core/spawn.ts";
import { type ApiClient, createApiClient } from "../mcp/api-client.ts";
import { cacheDirFor, createAttachmentCache } from "../mcp/attachment-cache.ts";
import { createCopyPurge, followDeletions } from "../mcp/attachment-purge.ts";
import { type ChannelNotification, followChannel } from "../mcp/channel.ts";
import { followEvents } from "../mcp/channel-events.ts";
import { SIPS_ENV, sipsConverter } from "../mcp/heic-to-jpeg.ts";
import { createPermissionRelay, type PermissionRelay, type RelayDeps } from "../mcp/permission-relay.ts";
import { createMcpServer } from "../mcp/server.ts";
import type { AttachmentDeps } from "../mcp/tools/get-attachment.ts";
import { VERSION } from "../version.ts";
import { type CommandContext, CommandError, EXIT_CONFIG } from "./exit.ts";
import { superviseProcess } from "./lifecycle.ts";
import { configOf, loggerOf } from "./setup.ts";

/** Stopping the channel stream and the server takes no longer than this. */
export const STOP_DEADLINE_MS = 5_000;

/** get_attachment's ports: the per-user cache under the OS temp dir and the HEIC converter. */
function attachmentDeps(config: Config, ctx: CommandContext): AttachmentDeps {
  const uid = process.getuid?.() ?? null;
  return {
    cache: createAttachmentCache({
      dir: cacheDirFor(ctx.env.TMPDIR || tmpdir(), uid ?? userInfo().username),
      uid,
      clock: systemClock,
    }),
    convertHeic: sipsConverter({
      sipsPath: config.sipsPath,
      env: childEnv(ctx.env, SIPS_ENV),
      spawner: bunSpawner,
    }),
  };
}

/**
 * The phone approval's relay (extensions.md §3), when GW_MCP_OWNER names a person with a one-to-one channel
 * gw has seen; otherwise none, and why is logged once.
 */
async function phoneApproval(
  config: Config,
  api: ApiClient,
  log: Logger,
  notify: RelayDeps["notify"],
): Promise<PermissionRelay | null> {
  const owner = config.mcpOwner;
  if (!owner) {
    log.info({}, "phone approval is off: set GW_MCP_OWNER to the person_id who answers permission prompts");
    return null;
  }
  const relay = createPermissionRelay({
    api,
    owner,
    agentId: config.agentId as string,
    expiryMs: config.mcpApprovalExpiryS * 1000,
    now: systemClock.now,
    sleep: (ms) => Bun.sleep(ms),
    notify,
    log,
  });
  const channels = await relay.ownerChannels();
  if (channels && channels.length > 0) return relay;
  log.warn(
    { owner },
    channels
      ? `phone approval is off: ${owner} has no one-to-one chat gw has seen (send gw a message from it, then restart)`
      : "phone approval is off: gw serve did not answer when gw mcp started",
  );
  return null;
}

export async function mcp(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx, { client: true });
  const channel = config.mcpChannel || ctx.argv.includes("--channel");
  const extended = channel || config.mcpExtended || ctx.argv.includes("--extended");
  if (channel && !config.agentId)
    throw new CommandError(
      "configuration error: GW_AGENT_ID is not set. A channel pushes the messages of one agent: set GW_AGENT_ID (e.g. claude-code).",
      EXIT_CONFIG,
    );
  const log = await loggerOf(config, ctx, "mcp");
  if (!config.agentId)
    log.warn({}, "GW_AGENT_ID is not set: unread, context and mark_read will answer AGENT_ID_REQUIRED");
  const api = createApiClient({
    baseUrl: config.baseUrl,
    token: config.bearerToken as string,
    agentId: config.agentId,
    fetch,
  });
  // The relay notifies once the server below exists (a request can only come after it connected).
  const notify: RelayDeps["notify"] = (n) => server.server.notification(n);
  const relay = channel && config.agentId ? await phoneApproval(config, api, log, notify) : null;
  const attachments = extended ? attachmentDeps(config, ctx) : null;
  const purge = attachments ? createCopyPurge({ api, cache: attachments.cache, log }) : null;
  const server = createMcpServer(api, VERSION, {
    channel,
    ...(attachments ? { extended: attachments } : {}),
    ...(relay ? { onPermissionRequest: relay.relay } : {}),
  });
  const transport = new StdioServerTransport();
  let stream: { stop(): Promise<void> } | null = null;
  const life = superviseProcess({
    events: process,
    log,
    stopDeadlineMs: STOP_DEADLINE_MS,
    stop: async () => {
      await stream?.stop();
      await server.close();
    },
  });
  transport.onclose = () => life.stop("the client closed the connection");
  process.stdin.on("end", () => life.stop("stdin ended"));
  await server.connect(transport);
  log.info(
    { base_url: config.baseUrl, agent_id: config.agentId, channel, extended },
    "gw mcp ready on stdio",
  );
  const ports = { api, now: systemClock.now, sleep: pause, random: Math.random, log };
  const streams: { stop(): Promise<void> }[] = [];
  if (channel && config.agentId) {
    const follow = {
      ...ports,
      agentId: config.agentId,
      notify: (n: ChannelNotification) => server.server.notification(n),
      ...(relay ? { take: relay.take } : {}),
    };
    streams.push(
      followChannel(follow),
      followEvents({ ...follow, ...(purge ? { onDeleted: purge.check } : {}) }),
    );
  } else if (purge) {
    streams.push(
      followDeletions({ ...ports, agentId: `${config.agentId ?? "gw-mcp"}#attachments`, check: purge.check }),
    );
  }
  // After the events cursor is set: a deletion from now on is seen by the follower, an earlier one here.
  if (purge) {
    void purge.check();
    streams.push(purge);
  }
  stream = { stop: async () => void (await Promise.all(streams.map((s) => s.stop()))) };
  return await life.done;
}
