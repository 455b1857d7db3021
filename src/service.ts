/**
 * Builds the whole service from a parsed Config and the ports (clock, logger, host, connectors): store,
 * allowlist, ingest, send path, webhook dispatcher, timers (attachment retention, key expiry) and the HTTP
 * app. `gw serve` and `gw demo` call it with the real ports, tests with temporary paths and test connectors.
 * It does not listen and installs no signal handlers: the command does that, between `prepare` (configuration
 * that can still fail) and `start`.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createAllowlistHolder } from "./allowlist/holder.ts";
import type { Allowlist } from "./allowlist/parse.ts";
import { createAttachmentSweeper } from "./attachments/sweeper.ts";
import type { HostInfo } from "./config/paths.ts";
import type { Config } from "./config/settings.ts";
import type { ConnectorRegistry } from "./connectors/connector.ts";
import { type Contacts, createContacts } from "./contacts/runner.ts";
import { type FaultOrigin, packageIn } from "./core/fault-origin.ts";
import { hostPort } from "./core/http-edge.ts";
import { createIdFactory, type IdFactory } from "./core/ids.ts";
import { type Names, NO_NAMES } from "./core/names.ts";
import type { Clock, Logger } from "./core/ports.ts";
import { createApp } from "./http/app.ts";
import type { Health } from "./http/health.ts";
import { createArrivals } from "./ingest/arrivals.ts";
import { createIngest, type Ingest } from "./ingest/ingest.ts";
import { createOutboundRecorder } from "./ingest/outbound.ts";
import { createIdempotentRunner } from "./send/idempotency.ts";
import { createMessageActions } from "./send/message-actions.ts";
import { createRateLimiter } from "./send/rate-limit.ts";
import { createSendMessage } from "./send/send-message.ts";
import { progressLogger } from "./store/migration-progress.ts";
import { openStore, type Store } from "./store/store.ts";
import { VERSION } from "./version.ts";
import { createDispatcher } from "./webhooks/dispatcher.ts";

export interface ServicePorts {
  config: Config;
  clock: Clock;
  log: Logger;
  host: HostInfo;
  /** Defaults to the global fetch (webhook deliveries). */
  fetch?: typeof fetch;
  /** Opens the state database (default openStore); tests pass one that fails at a chosen instant. */
  openStore?: (path: string) => Store;
  /** Builds the platform connectors once the store, id factory and allowlist exist. */
  connectors: (shared: {
    store: Store;
    ids: IdFactory;
    allowlist: () => Allowlist;
    names: Names;
  }) => ConnectorRegistry;
}

/** Unread long polls held at once; beyond it a request with `wait` answers at once (decisions.md). */
export const LONG_POLL_MAX_WAITERS = 1000;

/** How often expired Idempotency-Keys are deleted (they stop counting at expiry regardless). */
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 60 * 60 * 1000;

export function publicBaseUrl(host: string, port: number): string {
  return `http://${hostPort(host, port)}`;
}

/** The signed-webhook dispatcher, when GW_WEBHOOK_URL (and its secret) are set. */
function webhookDispatcher(ports: ServicePorts, store: Store) {
  const { config } = ports;
  if (!config.webhookUrl || !config.webhookSecret) return null;
  return createDispatcher({
    store,
    url: config.webhookUrl,
    secret: config.webhookSecret,
    delaysMs: config.webhookRetryDelaysMs,
    timeoutMs: config.webhookTimeoutMs,
    publicBaseUrl: publicBaseUrl(config.bindHost, config.bindPort),
    clock: ports.clock,
    log: ports.log,
    fetch: ports.fetch ?? fetch,
    random: Math.random,
    labelEvents: config.webhookEvents.some((k) => k !== "message"),
  });
}

/**
 * POST /messages/send, react and edit: the idempotency runner, the send service and the actions over the
 * connectors, sharing one rate limiter (a reaction or an edit takes a channel's token like a send).
 */
function sendPath(
  ports: ServicePorts,
  shared: { store: Store; connectors: ConnectorRegistry; ids: IdFactory; ingest: Ingest },
) {
  const { config, clock, log } = ports;
  const { store, connectors, ids } = shared;
  const limiter = createRateLimiter({
    clock,
    ratePerS: config.rateLimitPerChannelRps,
    burst: config.rateLimitBurst,
  });
  const idempotency = createIdempotentRunner({
    store: store.idempotency,
    clock,
    ttlMs: config.idempotencyTtlHours * 3_600_000,
    scope: "POST /messages/send",
    log,
  });
  const sendMessage = createSendMessage({
    store,
    connectors,
    limiter,
    recordOutbound: createOutboundRecorder({ store }),
    newMessageId: ids.message,
    now: () => clock.now(),
    attachmentDir: config.attachmentDir,
    pathPolicy: {
      homeDir: ports.host.homeDir,
      platform: ports.host.platform,
      ownPaths: [
        dirname(config.dbPath),
        config.attachmentDir,
        config.logDir,
        config.allowlistPath,
        config.chatDbPath,
      ],
      roots: config.sendPathRoots,
      maxBytes: config.attachmentMaxBytes,
    },
    log,
  });
  const actions = createMessageActions({ ...shared, limiter, now: () => clock.now() });
  return { idempotency, sendMessage, actions };
}

/** Each connector's health for /healthz; an absent one is `disabled`, saying how to turn it on. */
function connectorHealthOf(connectors: ConnectorRegistry) {
  return (): Health["connectors"] => ({
    device_messenger: connectors.device_messenger?.health() ?? {
      state: "disabled",
      detail: "Not configured.",
    },
    community_chat: connectors.community_chat?.health() ?? {
      state: "disabled",
      detail: "Not configured: set GW_COMMUNITY_BOT_TOKEN.",
    },
  });
}

/**
 * An unhandled error raised inside a connector's platform library: that connector restarts (true);
 * false when no connector owns the library (the process-level policy then stops gw).
 */
function restartConnectorOf(connectors: ConnectorRegistry, origin: FaultOrigin, err: unknown): boolean {
  const owners = Object.values(connectors).filter(
    (c) => c.restart && packageIn(origin.package, c.libraries ?? []),
  );
  const reason = `${origin.package}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300);
  for (const c of owners) c.restart?.(reason);
  return owners.length > 0;
}

/** The address book as the Names port (extensions.md §6): always the current book; none without Contacts. */
function namesOf(contacts: Contacts | null): Names {
  if (!contacts) return NO_NAMES;
  return {
    nameOf: (handle, region) => contacts.current().nameOf(handle, region),
    ready: () => contacts.ready(),
  };
}

export function createService(ports: ServicePorts) {
  const { config, clock, log } = ports;
  const startedAtMs = clock.now();
  const store = ports.openStore
    ? ports.openStore(config.dbPath)
    : openStore(config.dbPath, { onProgress: progressLogger(log, clock) });
  mkdirSync(config.attachmentDir, { recursive: true, mode: 0o700 });
  const allowlist = createAllowlistHolder({
    path: config.allowlistPath,
    identities: store.identities,
    log,
    options: { trustedServices: config.deviceTrustedServices },
  });
  const ids = createIdFactory(clock);
  const contacts = config.contactsOn
    ? createContacts({
        dir: config.contactsDir,
        defaultRegion: config.defaultRegion,
        log,
        pollMs: config.devicePollIntervalMs,
      })
    : null;
  const names = namesOf(contacts);
  const connectors = ports.connectors({ store, ids, allowlist: allowlist.current, names });
  const dispatcher = webhookDispatcher(ports, store);
  const arrivals = createArrivals({ maxWaiters: LONG_POLL_MAX_WAITERS });
  const eventArrivals = createArrivals({ maxWaiters: LONG_POLL_MAX_WAITERS });
  const ingest = createIngest({
    store,
    allowlist: allowlist.current,
    ids,
    clock,
    webhooksEnabled: dispatcher !== null,
    webhookKinds: new Set(config.webhookEvents),
    attachmentDir: config.attachmentDir,
    log,
    ...(dispatcher ? { onDeliveriesQueued: dispatcher.wake } : {}),
    announce: arrivals.publish,
    announceEvents: (events) =>
      eventArrivals.publish(events.map((e) => ({ source: e.source, channelId: e.channelId, messageTs: 0 }))),
  });
  const { idempotency, sendMessage, actions } = sendPath(ports, { store, connectors, ids, ingest });
  const sweeper = createAttachmentSweeper({
    attachments: store.attachments,
    dir: config.attachmentDir,
    retentionDays: config.attachmentRetentionDays,
    clock,
    log,
  });
  const app = createApp({
    bearerToken: config.bearerToken as string,
    version: VERSION,
    store,
    clock,
    publicBaseUrl: publicBaseUrl(config.bindHost, config.bindPort),
    attachmentDir: config.attachmentDir,
    sendMessage,
    idempotency,
    actions,
    allowlist: allowlist.current,
    names,
    arrivals,
    eventArrivals,
    log,
    health: {
      version: VERSION,
      startedAtMs,
      now: () => clock.now(),
      connectors: connectorHealthOf(connectors),
      webhookCounts: store.deliveries.counts,
    },
  });
  const parts = {
    app,
    store,
    allowlist,
    contacts,
    ingest,
    arrivals,
    eventArrivals,
    sweeper,
    idempotency,
    dispatcher,
  };
  return { ...parts, ...serviceLifecycle(parts, connectors) };
}

/** prepare, start, restart a connector, stop: the order of the service's parts. */
function serviceLifecycle(
  s: {
    store: Store;
    allowlist: ReturnType<typeof createAllowlistHolder>;
    contacts: Contacts | null;
    ingest: ReturnType<typeof createIngest>;
    arrivals: ReturnType<typeof createArrivals>;
    eventArrivals: ReturnType<typeof createArrivals>;
    sweeper: ReturnType<typeof createAttachmentSweeper>;
    idempotency: ReturnType<typeof createIdempotentRunner>;
    dispatcher: ReturnType<typeof createDispatcher> | null;
  },
  connectors: ConnectorRegistry,
) {
  let purgeTimer: ReturnType<typeof setInterval> | null = null;
  let prepared = false;
  let closed = false;
  const prepare = (): void => {
    if (!prepared) s.allowlist.load();
    prepared = true;
  };
  return {
    /**
     * Loads the allowlist: what can stop `gw serve` with a configuration error (exit 2) before it
     * listens. `start` does it when it was not done.
     */
    prepare,
    /** Starts the sweeper, the dispatcher and the connectors (their backlogs are read in the background). */
    async start(): Promise<void> {
      prepare();
      s.contacts?.start();
      s.sweeper.start();
      purgeTimer = setInterval(() => s.idempotency.purgeExpired(), IDEMPOTENCY_PURGE_INTERVAL_MS);
      s.dispatcher?.start();
      for (const c of Object.values(connectors)) await c.start(s.ingest);
    },
    restartConnectorOf: (origin: FaultOrigin, err: unknown) => restartConnectorOf(connectors, origin, err),
    /** Answers every held long poll now (before the server waits for in-flight requests to end). */
    endLongPolls(): void {
      s.arrivals.close();
      s.eventArrivals.close();
    },
    /** Stops timers, connectors and the dispatcher (in-flight attempts finish), then closes the store. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      s.arrivals.close();
      s.eventArrivals.close();
      s.sweeper.stop();
      s.contacts?.stop();
      if (purgeTimer) clearInterval(purgeTimer);
      for (const c of Object.values(connectors)) await c.stop();
      await s.dispatcher?.stop();
      s.idempotency.close();
      s.store.close();
    },
  };
}

export type Service = ReturnType<typeof createService>;
