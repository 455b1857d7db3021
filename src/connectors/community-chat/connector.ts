/**
 * The community-chat (Discord) connector (runner). `start` opens the gateway link in the background
 * (link-keeper.ts) and returns at once. Every message of a channel (live, replayed, or fetched by catch-up)
 * goes through that channel's serial queue into the inbox, so a channel is stored in order, one batch per
 * transaction with its position. After `stop` nothing more is stored but the connected mark, so what was not
 * stored is fetched again at the next start.
 */
import { pause } from "../../core/deadline.ts";
import type { IdFactory } from "../../core/ids.ts";
import { createKeyedQueue, type KeyedQueue } from "../../core/keyed-queue.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import type { Ingest } from "../../ingest/ingest.ts";
import type { ChannelName } from "../../store/channel-list.ts";
import type { ChannelStore } from "../../store/channels.ts";
import type { CursorStore } from "../../store/cursors.ts";
import type { Connector, ConnectorHealth } from "../connector.ts";
import { createActions } from "./actions.ts";
import { createCatchUpRunner } from "./catch-up-runner.ts";
import { changesOf, type MappedChanges } from "./changes.ts";
import { createChannelDirectory, type NameDispatch } from "./channel-names.ts";
import { type ConnectedMark, createConnectedMark, MARK_SOURCE } from "./connected-mark.ts";
import { linkHealth } from "./health.ts";
import { createHeldPayloads, type HeldPayloads } from "./held-payloads.ts";
import { createInbox, type Inbox } from "./inbox.ts";
import { createLinkKeeper, type LinkKeeper } from "./link-keeper.ts";
import { asDiscordMessage, channelFor, type DiscordMessage, displayName, kindOf } from "./mapping.ts";
import { TOKEN_REJECTED } from "./platform-errors.ts";
import { createSender } from "./sender.ts";
import { createSessionCatchUp } from "./session-catch-up.ts";
import { type CommunityTuning, DEFAULT_TUNING } from "./tuning.ts";

export type { CommunityTuning } from "./tuning.ts";

/** Authors' names kept for reactions in DMs. */
const KNOWN_NAMES_MAX = 1000;

/** The npm packages behind the link: an unhandled error raised in one restarts the connector. */
export const DISCORD_LIBRARIES = ["discord.js", "@discordjs/", "@sapphire/", "@vladfrangu/", "ws"] as const;

const seconds = (ms: number) => Math.round(ms / 1000);

export interface CommunityChatOptions {
  token: string;
  apiUrl: string;
  attachmentDir: string;
  attachmentMaxBytes: number;
  catchUp: { maxMessages: number; maxAgeMs: number };
  channels: ChannelStore;
  /** Where the connected mark is kept (connected-mark.ts). */
  cursors: CursorStore;
  /** The Discord user ids of the allowlisted community_chat senders, as the allowlist is now. */
  dmRecipients: () => readonly string[];
  /** Live payloads held in memory while they cannot be stored, at most (GW_COMMUNITY_QUEUE_MAX). */
  queueMax: number;
  /** Whether a Discord message id is stored already (its attachments need no download). */
  isStored: (platformId: string) => boolean;
  ids: IdFactory;
  clock: Clock;
  log: Logger;
  fetch: typeof fetch;
  tuning?: Partial<CommunityTuning>;
}

/**
 * What a (re)connect catches up (catch-up-runner.ts, session-catch-up.ts) and the connected mark: known
 * channels from their positions; new readable channels, threads and allowlisted people's DMs from the mark;
 * bounded by GW_COMMUNITY_CATCHUP_*, ahead of anything newer in a channel's queue. A channel whose catch-up
 * failed keeps its position until a retry succeeds.
 */
function catchUpParts(
  o: CommunityChatOptions,
  t: CommunityTuning,
  c: { queue: KeyedQueue; inbox: Inbox; keeper: LinkKeeper; log: Logger; signal: AbortSignal },
) {
  const connected = () => {
    const current = c.keeper.current();
    if (!current) throw new Error("not connected to Discord");
    return current;
  };
  const tokenRejected = () => c.keeper.stopForGood(TOKEN_REJECTED);
  const runner = createCatchUpRunner({
    queue: c.queue,
    inbox: c.inbox,
    history: (channelId, q) => connected().history(channelId, q),
    bounds: o.catchUp,
    retryMs: t.catchUpRetryMs,
    clock: o.clock,
    log: c.log,
    tokenRejected,
    signal: c.signal,
    onIdle: () => mark.refresh(),
  });
  const session = createSessionCatchUp({
    channels: o.channels,
    runner,
    mark: () => mark.current(),
    dmRecipients: o.dmRecipients,
    openDm: async (userId) => connected().openDm(userId),
    botId: () => c.keeper.current()?.botUser()?.id ?? null,
    maxAgeMs: o.catchUp.maxAgeMs,
    enabled: o.catchUp.maxMessages > 0,
    retryMs: t.catchUpRetryMs,
    now: o.clock.now,
    log: c.log,
    tokenRejected,
    signal: c.signal,
  });
  const mark = createConnectedMark({
    read: () => o.cursors.get(MARK_SOURCE)?.position ?? null,
    clock: o.clock,
    log: c.log,
    everyMs: t.markEveryMs,
    marginMs: t.markMarginMs,
    canAdvance: () => c.keeper.state().phase === "ready" && runner.idle() && session.behind() === 0,
    lastAckAt: () => c.keeper.current()?.lastAckAt() ?? null,
  });
  return { runner, session, mark };
}

/**
 * A live MESSAGE_CREATE: unless the held payloads are at their bound (then it is dropped and fetched again
 * later: held-payloads.ts), its attachments start downloading at once, it is stored in its channel's queue
 * (after any catch-up queued there), and the connected mark is held back until it is stored.
 */
function takeMessage(
  payload: unknown,
  c: {
    queue: KeyedQueue;
    inbox: Inbox;
    mark: ConnectedMark;
    held: HeldPayloads;
    log: Logger;
    stopping: AbortSignal;
  },
): DiscordMessage | null {
  const m = asDiscordMessage(payload);
  if (!m) {
    c.log.warn({}, "ignored a MESSAGE_CREATE without the fields gw needs");
    return null;
  }
  const kind = kindOf(m);
  const channelId = channelFor(kind, m.channel_id).id;
  if (!c.held.takeMessage(channelId, kind, m.channel_id, m.id)) return m;
  const staged = c.inbox.stage([m]);
  c.mark.received(m.id);
  c.queue
    .push(channelId, () => c.inbox.commit(channelId, kind, [m], staged))
    // After a stop began it may not have been stored: it keeps holding the mark back.
    .then(() => c.stopping.aborted || c.mark.settled(m.id))
    .catch((err) =>
      c.log.error({ err: String(err), channel_id: channelId }, "a Discord message could not be handled"),
    )
    .finally(c.held.release);
  return m;
}

/** Changes to stored messages, in their channel's queue; reactions past the bound are dropped. */
function takeChanges(
  mapped: MappedChanges,
  c: { queue: KeyedQueue; inbox: Inbox; held: HeldPayloads; log: Logger },
) {
  const reactionsOnly = mapped.changes.every((x) => x.kind === "reaction");
  if (reactionsOnly && !c.held.takeReaction()) return;
  if (!reactionsOnly) c.held.hold();
  void c.queue
    .push(mapped.channelId, () => c.inbox.commitChanges(mapped.channelId, mapped.changes))
    .catch((err) => c.log.error({ err: String(err) }, "a Discord change could not be handled"))
    .finally(c.held.release);
}

/**
 * Channel names from the gateway's dispatches (channel-names.ts): those that changed since last stored go
 * to the store, in the background; the names kept to compare with are bounded, newest kept.
 */
function channelNames(inbox: Inbox, log: Logger) {
  const directory = createChannelDirectory();
  const stored = new Map<string, string>();
  const store = (names: readonly ChannelName[]) => {
    const changed = names.filter((n) => stored.get(n.channelId) !== n.name);
    if (changed.length === 0) return;
    for (const n of changed) {
      stored.delete(n.channelId);
      stored.set(n.channelId, n.name);
      if (stored.size > KNOWN_NAMES_MAX * 10) stored.delete(stored.keys().next().value as string);
    }
    void inbox
      .commitNames(changed)
      .catch((err) => log.error({ err: String(err) }, "Discord channel names could not be stored"));
  };
  return {
    guild: (d: unknown) => store(directory.apply("guild", d)),
    rename: (t: NameDispatch, d: unknown) => store(directory.apply(t, d)),
  };
}

/** The link's health, then the inbox's store failures, then channels whose catch-up keeps failing. */
function connectorHealth(
  now: number,
  t: CommunityTuning,
  c: {
    keeper: LinkKeeper;
    inbox: Inbox;
    held: HeldPayloads;
    runner: { behind(): number };
    session: { behind(): number };
  },
): ConnectorHealth {
  const h = linkHealth(c.keeper.state(), now, {
    loginDeadlineMs: t.loginDeadlineMs,
    silenceMs: t.heartbeatSilenceMs,
  });
  if (h.state === "error") return h;
  const storeError = c.inbox.storeError();
  if (storeError) {
    const { messages } = c.held.dropped();
    const dropped =
      messages > 0 ? `; ${messages} dropped past GW_COMMUNITY_QUEUE_MAX are fetched again later` : "";
    return {
      state: "degraded",
      detail: `Storing Discord messages fails (${storeError}); retrying (${c.held.held()} held${dropped}).`,
    };
  }
  const behind = c.runner.behind() + c.session.behind();
  if (behind > 0 && h.state === "ok")
    return {
      state: "degraded",
      detail: `Could not fetch what ${behind} channel(s) missed; retrying every ${seconds(t.catchUpRetryMs)} s.`,
    };
  return h;
}

/**
 * What messages taught about their authors and channels, for dispatches that carry less: the names
 * authors' messages carried (reactions in DMs carry none) and the group DMs seen (channel_type 3: their
 * edits and reactions go to their messages' queue). Each bounded, newest kept.
 */
function createRecall() {
  const authors = new Map<string, string>();
  const groupDms = new Set<string>();
  return {
    note(m: DiscordMessage) {
      if (m.channel_type === 3 && !groupDms.has(m.channel_id)) {
        groupDms.add(m.channel_id);
        if (groupDms.size > KNOWN_NAMES_MAX) groupDms.delete(groupDms.values().next().value as string);
      }
      authors.delete(m.author.id);
      authors.set(m.author.id, displayName(m));
      if (authors.size > KNOWN_NAMES_MAX) authors.delete(authors.keys().next().value as string);
    },
    nameOf: (id: string) => authors.get(id) ?? null,
    isGroupDm: (id: string) => groupDms.has(id),
  };
}

export function createCommunityChat(o: CommunityChatOptions): Connector {
  const log = o.log.child({ connector: "community_chat" });
  const t: CommunityTuning = { ...DEFAULT_TUNING, ...o.tuning };
  const queue = createKeyedQueue();
  const stopping = new AbortController();
  const keeper: LinkKeeper = createLinkKeeper({
    token: o.token,
    apiUrl: o.apiUrl,
    tuning: t,
    clock: o.clock,
    log,
    signal: stopping.signal,
    events: {
      message: (p) => onMessage(p),
      session: (how, guildIds) => session.onSession(how, guildIds),
      guild: (d) => {
        session.onGuild(d);
        names.guild(d);
      },
      rename: (t, d) => names.rename(t, d),
      ready: () => session.onReady(),
      change: (what, d, key) => {
        const mapped = changesOf(what, d, {
          key,
          botId: link()?.botUser()?.id ?? null,
          now: o.clock.now(),
          nameOf: recall.nameOf,
          isGroupDm: recall.isGroupDm,
        });
        if (!mapped) return log.warn({ dispatch: what }, "ignored a dispatch without the fields gw needs");
        if (mapped.changes.length > 0) takeChanges(mapped, { queue, inbox, held, log });
      },
    },
  });
  const link = () => keeper.current();
  const outgoing = { link, onTokenRejected: () => keeper.stopForGood(TOKEN_REJECTED), log };

  const inbox = createInbox({
    attachmentDir: o.attachmentDir,
    attachmentMaxBytes: o.attachmentMaxBytes,
    downloadTimeoutMs: t.downloadTimeoutMs,
    ingestRetryMaxMs: t.ingestRetryMaxMs,
    isStored: o.isStored,
    botId: () => link()?.botUser()?.id ?? null,
    holdsPosition: (channelId) => runner.holdsPosition(channelId),
    ids: o.ids,
    log,
    fetch: o.fetch,
    signal: stopping.signal,
    pause: (ms) => pause(ms, stopping.signal),
  });

  const recall = createRecall();
  const names = channelNames(inbox, log);
  const onMessage = (payload: unknown) => {
    const m = takeMessage(payload, { queue, inbox, mark, held, log, stopping: stopping.signal });
    if (m) recall.note(m);
  };
  const { runner, session, mark } = catchUpParts(o, t, {
    queue,
    inbox,
    keeper,
    log,
    signal: stopping.signal,
  });
  const held = createHeldPayloads({ max: o.queueMax, log, runWhenDue: runner.runWhenDue });

  return {
    source: "community_chat",
    async start(target: Ingest) {
      inbox.setIngest(target);
      mark.start(target);
      void keeper.connect();
    },
    libraries: DISCORD_LIBRARIES,
    restart: keeper.restart,
    async stop() {
      const storeMark = mark.closing();
      stopping.abort();
      runner.stop();
      session.stop();
      await keeper.close();
      await Promise.race([queue.idle(), Bun.sleep(t.stopDrainMs)]);
      storeMark();
      inbox.setIngest(null);
    },
    send: createSender(outgoing),
    ...createActions({ ...outgoing, now: o.clock.now }),
    health: (): ConnectorHealth =>
      connectorHealth(o.clock.now(), t, { keeper, inbox, held, runner, session }),
  };
}
