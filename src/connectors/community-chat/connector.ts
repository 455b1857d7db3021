/**
 * The community-chat (Discord) connector (runner). `start` opens the gateway link in the background
 * (discord.js is imported only then) and returns at once; login has its own deadline in the health
 * report and non-fatal failures are retried with backoff. Every message of a channel (live, replayed,
 * or fetched by catch-up) goes through that channel's serial queue into the inbox, so a channel is
 * stored in order, one batch per transaction with the channel's position. Each session catches up
 * what was missed (session-catch-up.ts: known channels from their positions, new readable channels,
 * threads and allowlisted people's DMs from the connected mark; bounded by GW_COMMUNITY_CATCHUP_*),
 * ahead of anything newer in a channel's queue; a channel whose catch-up failed keeps its position until
 * a retry succeeds. `stop` closes the gateway cleanly, aborts downloads, stores nothing more but the
 * connected mark, so what was not stored is fetched again at the next start.
 */
import { withDeadline } from "../../core/deadline.ts";
import type { IdFactory } from "../../core/ids.ts";
import { createKeyedQueue } from "../../core/keyed-queue.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import type { Ingest } from "../../ingest/ingest.ts";
import type { ChannelStore } from "../../store/channels.ts";
import type { CursorStore } from "../../store/cursors.ts";
import type { Connector, ConnectorHealth } from "../connector.ts";
import { createCatchUpRunner } from "./catch-up-runner.ts";
import { createConnectedMark, MARK_SOURCE } from "./connected-mark.ts";
import type { DiscordLink, LinkOptions } from "./discord-link.ts";
import { type LinkState, linkHealth } from "./health.ts";
import { createInbox } from "./inbox.ts";
import { asDiscordMessage, channelFor, kindOf } from "./mapping.ts";
import { FATAL_CLOSE, loginFailure, TOKEN_REJECTED } from "./platform-errors.ts";
import { createSender } from "./sender.ts";
import { createSessionCatchUp } from "./session-catch-up.ts";
import { type CommunityTuning, DEFAULT_TUNING } from "./tuning.ts";

export type { CommunityTuning } from "./tuning.ts";

/** The npm packages behind the link: an unhandled error raised in one restarts the connector. */
export const DISCORD_LIBRARIES = ["discord.js", "@discordjs/", "@sapphire/", "@vladfrangu/", "ws"] as const;
/** discord.js's `destroy()` has hung under reconnect churn: a stop or restart waits no longer. */
export const DESTROY_DEADLINE_MS = 3_000;

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
  /** Whether a Discord message id is stored already (its attachments need no download). */
  isStored: (platformId: string) => boolean;
  ids: IdFactory;
  clock: Clock;
  log: Logger;
  fetch: typeof fetch;
  tuning?: Partial<CommunityTuning>;
}

export function createCommunityChat(o: CommunityChatOptions): Connector {
  const log = o.log.child({ connector: "community_chat" });
  const t: CommunityTuning = { ...DEFAULT_TUNING, ...o.tuning };
  const queue = createKeyedQueue();
  const stopping = new AbortController();
  let link: DiscordLink | null = null;
  let state: LinkState = { phase: "starting", since: o.clock.now(), problem: null, lastAckAt: null };
  /** Restarts after library faults since the link was last ready. */
  let restarts = 0;

  const setPhase = (phase: LinkState["phase"], problem: string | null = null) => {
    if (state.phase === "failed") return;
    state = { ...state, phase, since: phase === state.phase ? state.since : o.clock.now(), problem };
  };
  const fail = (detail: string) => {
    if (state.phase !== "failed") log.error({ detail }, "Discord connector stopped working");
    setPhase("failed", detail);
  };
  /** Waits `ms`, or less when the connector stops. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopping.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      stopping.signal.addEventListener("abort", done);
    });

  const inbox = createInbox({
    attachmentDir: o.attachmentDir,
    attachmentMaxBytes: o.attachmentMaxBytes,
    downloadTimeoutMs: t.downloadTimeoutMs,
    ingestRetryMaxMs: t.ingestRetryMaxMs,
    isStored: o.isStored,
    botId: () => link?.botUser()?.id ?? null,
    holdsPosition: (channelId) => runner.holdsPosition(channelId),
    ids: o.ids,
    log,
    fetch: o.fetch,
    signal: stopping.signal,
    pause,
  });

  const onMessage = (payload: unknown) => {
    const m = asDiscordMessage(payload);
    if (!m) {
      log.warn({}, "ignored a MESSAGE_CREATE without the fields gw needs");
      return;
    }
    const kind = kindOf(m);
    const channelId = channelFor(kind, m.channel_id).id;
    const staged = inbox.stage([m]);
    mark.received(m.id);
    queue
      .push(channelId, () => inbox.commit(channelId, kind, [m], staged))
      // After a stop began it may not have been stored: it keeps holding the mark back.
      .then(() => stopping.signal.aborted || mark.settled(m.id))
      .catch((err) =>
        log.error({ err: String(err), channel_id: channelId }, "a Discord message could not be handled"),
      );
  };

  // --- catch-up and the connected mark (catch-up-runner.ts, session-catch-up.ts, connected-mark.ts) ---

  const runner = createCatchUpRunner({
    queue,
    inbox,
    history: (channelId, q) => {
      if (!link) throw new Error("not connected to Discord");
      return link.history(channelId, q);
    },
    bounds: o.catchUp,
    retryMs: t.catchUpRetryMs,
    clock: o.clock,
    log,
    tokenRejected: () => fail(TOKEN_REJECTED),
    signal: stopping.signal,
    onIdle: () => mark.refresh(),
  });
  const session = createSessionCatchUp({
    channels: o.channels,
    runner,
    mark: () => mark.current(),
    dmRecipients: o.dmRecipients,
    openDm: (userId) => {
      if (!link) return Promise.reject(new Error("not connected to Discord"));
      return link.openDm(userId);
    },
    botId: () => link?.botUser()?.id ?? null,
    maxAgeMs: o.catchUp.maxAgeMs,
    enabled: o.catchUp.maxMessages > 0,
    retryMs: t.catchUpRetryMs,
    now: o.clock.now,
    log,
    tokenRejected: () => fail(TOKEN_REJECTED),
    signal: stopping.signal,
  });
  const mark = createConnectedMark({
    read: () => o.cursors.get(MARK_SOURCE)?.position ?? null,
    clock: o.clock,
    log,
    everyMs: t.markEveryMs,
    marginMs: t.markMarginMs,
    canAdvance: () => state.phase === "ready" && runner.idle() && session.behind() === 0,
    lastAckAt: () => link?.lastAckAt() ?? null,
  });

  // --- the link: login with retries, events, health -------------------------------------------

  /** Closes a link without waiting past DESTROY_DEADLINE_MS (discord.js's destroy can hang). */
  const closeLink = (l: DiscordLink) =>
    withDeadline(l.destroy(), DESTROY_DEADLINE_MS, () =>
      log.warn({ deadline_ms: DESTROY_DEADLINE_MS }, "closing the Discord client took too long; left behind"),
    );

  /** Opens links until one logs in (within the login deadline) or the failure needs a person. */
  const connect = async (firstWaitMs = 0) => {
    const { openDiscordLink } = await import("./discord-link.ts");
    const options: LinkOptions = {
      token: o.token,
      apiUrl: o.apiUrl,
      restTimeoutMs: t.restTimeoutMs,
      restRetries: t.restRetries,
      maxRateLimitWaitMs: t.maxRateLimitWaitMs,
      throttleIdentify: t.throttleIdentify,
    };
    if (firstWaitMs > 0) await pause(firstWaitMs);
    for (let attempt = 0; !stopping.signal.aborted; attempt++) {
      // Events of a link that was replaced (restart, failed login) are ignored.
      const current: DiscordLink = openDiscordLink(options, {
        message: (p) => link === current && onMessage(p),
        session: (how, guildIds) => link === current && session.onSession(how, guildIds),
        guild: (d) => link === current && session.onGuild(d),
        ready: () => {
          if (link !== current) return;
          restarts = 0;
          setPhase("ready");
          session.onReady();
        },
        reconnecting: () => link === current && setPhase("reconnecting"),
        closedForGood: (code) =>
          link === current &&
          fail(FATAL_CLOSE[code] ?? `Discord closed the gateway for good (close ${code}).`),
        warn: (what, err) => log.warn({ err: err === undefined ? undefined : String(err) }, what),
      });
      link = current;
      try {
        await withDeadline(current.login(), t.loginDeadlineMs, () => {
          throw new Error(
            `the login did not finish within ${t.loginDeadlineMs} ms (no READY from Discord; GW_COMMUNITY_LOGIN_TIMEOUT_MS)`,
          );
        });
        if (link !== current) return;
        log.info({ bot: current.botUser()?.id }, "connected to Discord");
        return;
      } catch (err) {
        if (stopping.signal.aborted || link !== current) return;
        const why = loginFailure(err);
        if ("fatal" in why) return fail(why.fatal);
        const wait = t.loginRetryMs[Math.min(attempt, t.loginRetryMs.length - 1)] ?? 60_000;
        log.warn({ err: why.retry, retry_in_ms: wait }, "Discord login failed; retrying");
        state = { ...state, problem: why.retry };
        link = null;
        await closeLink(current);
        await pause(wait);
      }
    }
  };

  /** After a library fault: drop the link, open a new one (backing off when faults repeat). */
  const restart = (reason: string) => {
    if (stopping.signal.aborted || state.phase === "failed" || state.phase === "restarting") return;
    const wait =
      restarts === 0 ? 0 : (t.loginRetryMs[Math.min(restarts - 1, t.loginRetryMs.length - 1)] ?? 60_000);
    restarts += 1;
    log.warn({ reason, restarts, wait_ms: wait }, "restarting the Discord connection after a library error");
    setPhase("restarting", reason);
    const old = link;
    link = null;
    void (old ? closeLink(old) : Promise.resolve())
      .then(() => connect(wait))
      .catch((err) => fail(`The Discord connector could not restart: ${String(err)}`));
  };

  return {
    source: "community_chat",
    async start(target: Ingest) {
      inbox.setIngest(target);
      mark.start(target);
      void connect().catch((err) => fail(`The Discord connector could not start: ${String(err)}`));
    },
    libraries: DISCORD_LIBRARIES,
    restart,
    async stop() {
      const storeMark = mark.closing();
      stopping.abort();
      runner.stop();
      session.stop();
      if (link) await closeLink(link);
      await Promise.race([queue.idle(), Bun.sleep(t.stopDrainMs)]);
      storeMark();
      inbox.setIngest(null);
    },
    send: createSender({ link: () => link, onTokenRejected: () => fail(TOKEN_REJECTED), log }),
    health(): ConnectorHealth {
      const h = linkHealth({ ...state, lastAckAt: link?.lastAckAt() ?? null }, o.clock.now(), {
        loginDeadlineMs: t.loginDeadlineMs,
        silenceMs: t.heartbeatSilenceMs,
      });
      if (h.state === "error") return h;
      const storeError = inbox.storeError();
      if (storeError)
        return { state: "degraded", detail: `Storing Discord messages fails (${storeError}); retrying.` };
      const behind = runner.behind() + session.behind();
      if (behind > 0 && h.state === "ok")
        return {
          state: "degraded",
          detail: `Could not fetch what ${behind} channel(s) missed; retrying every ${seconds(t.catchUpRetryMs)} s.`,
        };
      return h;
    },
  };
}
