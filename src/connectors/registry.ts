/**
 * Which platform connectors `gw serve` runs (composition helper). The iMessage connector runs when the
 * configuration says so (macOS, or GW_CHAT_DB_PATH set: tests, the demo); the Discord connector runs
 * when GW_COMMUNITY_BOT_TOKEN is set (discord.js itself is loaded only when it starts).
 */
import type { Allowlist } from "../allowlist/parse.ts";
import type { HostInfo } from "../config/paths.ts";
import type { Config } from "../config/settings.ts";
import { childEnv } from "../core/child-env.ts";
import type { IdFactory } from "../core/ids.ts";
import type { Names } from "../core/names.ts";
import type { Clock, Logger, Spawner } from "../core/ports.ts";
import type { Store } from "../store/store.ts";
import { type CommunityTuning, createCommunityChat } from "./community-chat/connector.ts";
import type { ConnectorRegistry } from "./connector.ts";
import { createDeviceMessenger } from "./device-messenger/connector.ts";

/**
 * What osascript gets beyond the child allowlist: macOS's text encoding for CoreFoundation, and the
 * Messages stand-in's own settings (GW_STANDIN_*: the demo's and the tests' Messages.app).
 */
export const OSASCRIPT_ENV = ["__CF_USER_TEXT_ENCODING", "GW_STANDIN_*"];

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
    names,
  }: {
    store: Store;
    ids: IdFactory;
    /** The live allowlist (a SIGHUP reload replaces it). */
    allowlist: () => Allowlist;
    /** Contacts names for iMessage senders (the address book as it is now). */
    names?: Names;
  }): ConnectorRegistry => {
    const registry: ConnectorRegistry = {};
    if (p.config.deviceMessengerOn) {
      registry.device_messenger = createDeviceMessenger({
        chatDbPath: p.config.chatDbPath,
        pollIntervalMs: p.config.devicePollIntervalMs,
        watchFiles: p.watchFiles ?? true,
        osascriptPath: p.config.osascriptPath,
        ...(p.osascriptTimeoutMs ? { osascriptTimeoutMs: p.osascriptTimeoutMs } : {}),
        osascriptEnv: childEnv(p.env, OSASCRIPT_ENV),
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
        ...(names ? { names } : {}),
      });
    }
    if (p.config.communityBotToken) {
      registry.community_chat = createCommunityChat({
        token: p.config.communityBotToken,
        apiUrl: p.config.communityApiUrl,
        attachmentDir: p.config.attachmentDir,
        attachmentMaxBytes: p.config.attachmentMaxBytes,
        queueMax: p.config.communityQueueMax,
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
        tuning: { loginDeadlineMs: p.config.communityLoginTimeoutMs, ...p.communityTuning },
      });
    }
    return registry;
  };
}
