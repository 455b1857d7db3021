/**
 * Keeps the Discord gateway link up (runner): opens a link (discord.js is imported only then), logs in
 * within the login deadline (GW_COMMUNITY_LOGIN_TIMEOUT_MS) and retries what is worth retrying with
 * backoff; a token or intents Discord refused fail for good (a person must act). `restart` drops the link
 * after a library fault and opens a new one, backing off while faults repeat. Events of a link that was
 * replaced are ignored; closing a link never waits past DESTROY_DEADLINE_MS. Its state feeds health.
 */
import { pause, withDeadline } from "../../core/deadline.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import type { DiscordLink, LinkEvents, LinkOptions } from "./discord-link.ts";
import type { LinkState } from "./health.ts";
import { FATAL_CLOSE, loginFailure } from "./platform-errors.ts";
import type { CommunityTuning } from "./tuning.ts";

/** discord.js's `destroy()` has hung under reconnect churn: a stop or restart waits no longer. */
export const DESTROY_DEADLINE_MS = 3_000;

export type KeeperEvents = Pick<LinkEvents, "message" | "session" | "guild" | "ready" | "change" | "rename">;

export function createLinkKeeper(deps: {
  token: string;
  apiUrl: string;
  tuning: CommunityTuning;
  clock: Clock;
  log: Logger;
  signal: AbortSignal;
  events: KeeperEvents;
}) {
  const { tuning: t, log, signal } = deps;
  let link: DiscordLink | null = null;
  let state: LinkState = { phase: "starting", since: deps.clock.now(), problem: null, lastAckAt: null };
  /** Restarts after library faults since the link was last ready. */
  let restarts = 0;

  const setPhase = (phase: LinkState["phase"], problem: string | null = null) => {
    if (state.phase === "failed") return;
    state = { ...state, phase, since: phase === state.phase ? state.since : deps.clock.now(), problem };
  };
  const stopForGood = (detail: string) => {
    if (state.phase !== "failed") log.error({ detail }, "Discord connector stopped working");
    setPhase("failed", detail);
  };
  const backoff = (n: number) => t.loginRetryMs[Math.min(n, t.loginRetryMs.length - 1)] ?? 60_000;
  const close = (l: DiscordLink) =>
    withDeadline(l.destroy(), DESTROY_DEADLINE_MS, () =>
      log.warn({ deadline_ms: DESTROY_DEADLINE_MS }, "closing the Discord client took too long; left behind"),
    );

  /** A new link whose events reach the connector only while it is the current one. */
  const open = (
    openDiscordLink: typeof import("./discord-link.ts").openDiscordLink,
    options: LinkOptions,
  ) => {
    const current: DiscordLink = openDiscordLink(options, {
      message: (p) => link === current && deps.events.message(p),
      session: (how, guildIds) => link === current && deps.events.session(how, guildIds),
      guild: (d) => link === current && deps.events.guild(d),
      change: (t, d, key) => link === current && deps.events.change(t, d, key),
      rename: (t, d) => link === current && deps.events.rename(t, d),
      ready: () => {
        if (link !== current) return;
        restarts = 0;
        setPhase("ready");
        deps.events.ready();
      },
      reconnecting: () => link === current && setPhase("reconnecting"),
      closedForGood: (code) =>
        link === current &&
        stopForGood(FATAL_CLOSE[code] ?? `Discord closed the gateway for good (close ${code}).`),
      warn: (what, err) => log.warn({ err: err === undefined ? undefined : String(err) }, what),
    });
    link = current;
    return current;
  };

  /** Opens links until one logs in (within the login deadline) or the failure needs a person. */
  const connect = async (firstWaitMs = 0): Promise<void> => {
    const { openDiscordLink } = await import("./discord-link.ts");
    const options: LinkOptions = {
      token: deps.token,
      apiUrl: deps.apiUrl,
      restTimeoutMs: t.restTimeoutMs,
      restRetries: t.restRetries,
      maxRateLimitWaitMs: t.maxRateLimitWaitMs,
      throttleIdentify: t.throttleIdentify,
    };
    if (firstWaitMs > 0) await pause(firstWaitMs, signal);
    for (let attempt = 0; !signal.aborted; attempt++) {
      const current = open(openDiscordLink, options);
      try {
        await withDeadline(current.login(), t.loginDeadlineMs, () => {
          throw new Error(
            `the login did not finish within ${t.loginDeadlineMs} ms (no READY from Discord; GW_COMMUNITY_LOGIN_TIMEOUT_MS)`,
          );
        });
        if (link === current) log.info({ bot: current.botUser()?.id }, "connected to Discord");
        return;
      } catch (err) {
        if (signal.aborted || link !== current) return;
        const why = loginFailure(err);
        if ("fatal" in why) return stopForGood(why.fatal);
        log.warn({ err: why.retry, retry_in_ms: backoff(attempt) }, "Discord login failed; retrying");
        state = { ...state, problem: why.retry };
        link = null;
        await close(current);
        await pause(backoff(attempt), signal);
      }
    }
  };

  return {
    connect: () =>
      connect().catch((err) => stopForGood(`The Discord connector could not start: ${String(err)}`)),
    /** After a library fault: drop the link, open a new one (backing off when faults repeat). */
    restart(reason: string): void {
      if (signal.aborted || state.phase === "failed" || state.phase === "restarting") return;
      const wait = restarts === 0 ? 0 : backoff(restarts - 1);
      restarts += 1;
      log.warn(
        { reason, restarts, wait_ms: wait },
        "restarting the Discord connection after a library error",
      );
      setPhase("restarting", reason);
      const old = link;
      link = null;
      void (old ? close(old) : Promise.resolve())
        .then(() => connect(wait))
        .catch((err) => stopForGood(`The Discord connector could not restart: ${String(err)}`));
    },
    stopForGood,
    current: () => link,
    state: (): LinkState => ({ ...state, lastAckAt: link?.lastAckAt() ?? null }),
    /** Closes the current link (the caller aborted `signal` first, so none opens after). */
    close: async (): Promise<void> => {
      if (link) await close(link);
    },
  };
}

export type LinkKeeper = ReturnType<typeof createLinkKeeper>;
