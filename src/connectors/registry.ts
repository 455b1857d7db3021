/**
 * Which platform connectors `gw serve` runs (composition helper). The iMessage connector runs on
 * macOS, or anywhere GW_CHAT_DB_PATH is set explicitly (tests, the demo); the Discord connector runs
 * when GW_COMMUNITY_BOT_TOKEN is set (discord.js itself is loaded only when it starts).
 */
import type { Allowlist } from "../allowlist/parse.ts";
import type { HostInfo } from "../config/paths.ts";
import type { Config } from "../config/settings.ts";
import type { IdFactory } from "../core/ids.ts";
import type { Clock, Logger, Spawner } from "../core/ports.ts";
import type { Store } from "../store/store.ts";
import { type CommunityTuning, createCommunityChat } from "./community-chat/connector.ts";
import type { ConnectorRegistry } from "./connector.ts";
import { createDeviceMessenger } from "./device-messenger/connector.ts";

/** Variables never handed to child programs such as osascript. */
const SECRET_ENV = new Set(["GW_BEARER_TOKEN", "GW_WEBHOOK_SECRET", "GW_COMMUNITY_BOT_TOKEN"]);

export function childEnv(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !SECRET_ENV.has(e[0])),
  );
}

export interface RegistryPorts {
  config: Config;
  env: Record<string, string | undefined>;
  host: HostInfo;
  clock: Clock;
  log: Logger;
  spawner: Spawner;
  watchFiles?: boolean;
  /** Tests shorten the osascript deadline. */
  osascriptTimeoutMs?: number;
  /** Tests shorten the Discord connector's timers. */
  communityTuning?: Partial<CommunityTuning>;
  /** Attachment downloads; defaults to the global fetch. */
  fetch?: typeof fetch;
}

export function buildConnectors(p: RegistryPorts) {
  return ({
    store,
    ids,
    allowlist,
  }: {
    store: Store;
    ids: IdFactory;
    /** The live allowlist (a SIGHUP reload replaces it). */
    allowlist: () => Allowlist;
  }): ConnectorRegistry => {
    const registry: ConnectorRegistry = {};
    if (p.host.platform === "darwin" || p.env.GW_CHAT_DB_PATH) {
      registry.device_messenger = createDeviceMessenger({
        chatDbPath: p.config.chatDbPath,
        pollIntervalMs: p.config.devicePollIntervalMs,
        watchFiles: p.watchFiles ?? true,
        osascriptPath: p.config.osascriptPath,
        ...(p.osascriptTimeoutMs ? { osascriptTimeoutMs: p.osascriptTimeoutMs } : {}),
        osascriptEnv: childEnv(p.env),
        attachmentDir: p.config.attachmentDir,
        attachmentMaxBytes: p.config.attachmentMaxBytes,
        backfillFenceMinutes: p.config.deviceBackfillFenceMinutes,
        attachmentWaitMs: p.config.deviceAttachmentWaitMs,
        homeDir: p.host.homeDir,
        cursors: store.cursors,
        ids,
        clock: p.clock,
        log: p.log,
        spawner: p.spawner,
      });
    }
    if (p.config.communityBotToken) {
      registry.community_chat = createCommunityChat({
        token: p.config.communityBotToken,
        apiUrl: p.config.communityApiUrl,
        attachmentDir: p.config.attachmentDir,
        attachmentMaxBytes: p.config.attachmentMaxBytes,
        catchUp: {
          maxMessages: p.config.communityCatchupMaxMessages,
          maxAgeMs: p.config.communityCatchupMaxAgeHours * 3_600_000,
        },
        channels: store.channels,
        cursors: store.cursors,
        // Catch-up opens the DMs of these people (only theirs: a stranger's DM cannot be found).
        dmRecipients: () =>
          allowlist()
            .entries.filter((e) => e.source === "community_chat")
            .map((e) => e.id),
        isStored: (id) => store.messages.idByPlatformId("community_chat", id) !== null,
        ids,
        clock: p.clock,
        log: p.log,
        fetch: p.fetch ?? fetch,
        ...(p.communityTuning ? { tuning: p.communityTuning } : {}),
      });
    }
    return registry;
  };
}
