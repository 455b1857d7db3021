/**
 * The community-chat (Discord) connector (runner). `start` opens the gateway link in the background
 * (discord.js is imported only then) and returns at once; login has its own deadline in the health
 * report and non-fatal failures are retried with backoff. Every message of a channel (live, replayed,
 * or fetched by catch-up) goes through that channel's serial queue into the inbox, so a channel is
 * stored in order, one batch per transaction with the channel's position. At every new or resumed
 * session each known channel first catches up from its stored position (bounded by
 * GW_COMMUNITY_CATCHUP_*), ahead of anything newer in its queue; a channel whose catch-up failed keeps
 * its position until a retry succeeds. `stop` closes the gateway cleanly, aborts downloads and stores
 * nothing more, so what was not stored is fetched again at the next start.
 */
import { withDeadline } from "../../core/deadline.ts";
import type { IdFactory } from "../../core/ids.ts";
import { createKeyedQueue } from "../../core/keyed-queue.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import { createSlots } from "../../core/slots.ts";
import type { Ingest } from "../../ingest/ingest.ts";
import type { ChannelRow, ChannelStore } from "../../store/channels.ts";
import type { Connector, ConnectorHealth } from "../connector.ts";
import { fetchMissed, HISTORY_PAGE } from "./catch-up.ts";
import type { DiscordLink, LinkOptions } from "./discord-link.ts";
import { type LinkState, linkHealth } from "./health.ts";
import { createInbox } from "./inbox.ts";
import { asDiscordMessage, channelFor, kindOf, kindOfChannelId } from "./mapping.ts";
import {
  FATAL_CLOSE,
  isChannelGone,
  isTokenRejection,
  loginFailure,
  TOKEN_REJECTED,
} from "./platform-errors.ts";
import { createSender } from "./sender.ts";
import { CATCH_UP_CONCURRENCY, type CommunityTuning, DEFAULT_TUNING } from "./tuning.ts";

export type { CommunityTuning } from "./tuning.ts";

/** The npm packages behind the link: an unhandled error raised in one restarts the connector. */
export const DISCORD_LIBRARIES = ["discord.js", "@discordjs/", "@sapphire/", "@vladfrangu/", "ws"] as const;
/** discord.js's `destroy()` has hung under reconnect churn: a stop or restart waits no longer. */
export const DESTROY_DEADLINE_MS = 3_000;

/** How often a long catch-up logs its progress. */
const PROGRESS_EVERY_MS = 2000;
const seconds = (ms: number) => Math.round(ms / 1000);

export interface CommunityChatOptions {
  token: string;
  apiUrl: string;
  attachmentDir: string;
  attachmentMaxBytes: number;
  catchUp: { maxMessages: number; maxAgeMs: number };
  channels: ChannelStore;
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
  /** Channels whose catch-up failed: their position stays put until one succeeds, so the gap is kept. */
  const behind = new Set<string>();
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
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
    holdsPosition: (channelId) => behind.has(channelId),
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
    queue
      .push(channelId, () => inbox.commit(channelId, kind, [m], staged))
      .catch((err) =>
        log.error({ err: String(err), channel_id: channelId }, "a Discord message could not be handled"),
      );
  };

  // --- catch-up: each known channel fetches what it missed, ahead of newer work in its queue ---

  const withSlot = createSlots(CATCH_UP_CONCURRENCY);

  const catchUpChannel = async (row: ChannelRow, current: DiscordLink): Promise<number> => {
    const kind = kindOfChannelId(row.id);
    if (!kind || stopping.signal.aborted) return 0;
    try {
      const missed = await withSlot(() =>
        fetchMissed(
          {
            discordChannelId: row.platform_ref,
            position: row.cursor,
            maxMessages: o.catchUp.maxMessages,
            maxAgeMs: o.catchUp.maxAgeMs,
            now: o.clock.now(),
          },
          current.history,
        ),
      );
      behind.delete(row.id);
      if (missed.truncated)
        log.warn(
          { channel_id: row.id, fetched: missed.messages.length },
          "catch-up bound reached (GW_COMMUNITY_CATCHUP_MAX_MESSAGES): what this channel missed after these, if anything, is not fetched",
        );
      for (let i = 0; i < missed.messages.length; i += HISTORY_PAGE) {
        const page = missed.messages.slice(i, i + HISTORY_PAGE);
        await inbox.commit(row.id, kind, page, inbox.stage(page));
      }
      return missed.messages.length;
    } catch (err) {
      if (isTokenRejection(err)) {
        fail(TOKEN_REJECTED);
        return 0;
      }
      if (isChannelGone(err)) {
        log.warn(
          { channel_id: row.id, err: String(err) },
          "channel deleted or closed to the bot; not caught up",
        );
        return 0;
      }
      behind.add(row.id);
      log.warn(
        { channel_id: row.id, err: String(err), retry_in_ms: t.catchUpRetryMs },
        "catch-up of this channel failed; its position waits until a retry succeeds",
      );
      retryTimer ??= setTimeout(() => {
        retryTimer = null;
        catchUp("retry", (r) => behind.has(r.id));
      }, t.catchUpRetryMs);
      return 0;
    }
  };

  /** Queues a catch-up in every known channel now, before any later message of the session. */
  const catchUp = (how: "new" | "resumed" | "retry", which: (row: ChannelRow) => boolean = () => true) => {
    const current = link;
    if (!current || o.catchUp.maxMessages === 0 || stopping.signal.aborted) return;
    const rows = o.channels.ofSource("community_chat").filter(which);
    const started = o.clock.now();
    let done = 0;
    let messages = 0;
    // A long catch-up (many channels, Discord's 50 requests/s) says how far it is.
    const progress = setInterval(() => {
      const s = Math.max(0.001, (o.clock.now() - started) / 1000);
      log.info(
        {
          channels_done: done,
          channels: rows.length,
          messages,
          messages_per_s: Math.round(messages / s),
          eta_s: done === 0 ? null : Math.ceil(((rows.length - done) * s) / done),
        },
        "Discord catch-up in progress",
      );
    }, PROGRESS_EVERY_MS);
    Promise.all(
      rows.map((row) =>
        queue
          .push(row.id, () => catchUpChannel(row, current))
          .then((n) => {
            done += 1;
            messages += n;
            return n;
          }),
      ),
    )
      .then(() => {
        log.info(
          { session: how, channels: rows.length, messages, ms: o.clock.now() - started },
          "Discord catch-up done",
        );
      })
      .catch((err) => log.error({ err: String(err) }, "Discord catch-up failed"))
      .finally(() => clearInterval(progress));
  };

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
        session: (how) => link === current && catchUp(how),
        ready: () => {
          if (link !== current) return;
          restarts = 0;
          setPhase("ready");
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
      void connect().catch((err) => fail(`The Discord connector could not start: ${String(err)}`));
    },
    libraries: DISCORD_LIBRARIES,
    restart,
    async stop() {
      stopping.abort();
      if (retryTimer) clearTimeout(retryTimer);
      if (link) await closeLink(link);
      await Promise.race([queue.idle(), Bun.sleep(t.stopDrainMs)]);
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
      if (behind.size > 0 && h.state === "ok")
        return {
          state: "degraded",
          detail: `Could not fetch what ${behind.size} channel(s) missed; retrying every ${seconds(t.catchUpRetryMs)} s.`,
        };
      return h;
    },
  };
}
