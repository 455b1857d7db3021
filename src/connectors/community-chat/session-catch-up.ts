/**
 * What each gateway session catches up (runner over catch-up-plan.ts), queued ahead of any later message of
 * its channel or guild. A new session takes the known channels and the connected mark as they are at READY; a
 * resumed one checks every known channel. With no mark (first start) nothing gw has not stored is fetched. DM
 * opens that failed for a passing reason are retried every `retryMs`; meanwhile the connected mark waits
 * (`behind` counts them).
 */
import type { Logger } from "../../core/ports.ts";
import type { ChannelRow, ChannelStore } from "../../store/channels.ts";
import { type CatchUpTask, knownTask, planDm, planGuild, startingMark } from "./catch-up-plan.ts";
import type { CatchUpRunner } from "./catch-up-runner.ts";
import { readGuild } from "./guild-channels.ts";
import { CHANNEL_PREFIX } from "./mapping.ts";
import { isRefused, isTokenRejection } from "./platform-errors.ts";
import { isSnowflake, snowflakeAt } from "./snowflake.ts";

export interface SessionDeps {
  channels: ChannelStore;
  runner: CatchUpRunner;
  /** The stored connected mark. */
  mark: () => string | null;
  /** The Discord user ids of the allowlisted community_chat senders, as the allowlist is now. */
  dmRecipients: () => readonly string[];
  openDm: (userId: string) => Promise<unknown>;
  botId: () => string | null;
  maxAgeMs: number;
  enabled: boolean;
  retryMs: number;
  now: () => number;
  log: Logger;
  tokenRejected: () => void;
  signal: AbortSignal;
}

interface Session {
  known: Map<string, ChannelRow>;
  since: string | null;
  ageFloor: string;
  guilds: Set<string>;
  covered: Set<string>;
  /** Released at shard ready, when every guild listed in READY has been planned or given up. */
  planning: (() => void) | null;
}

/** Opens these people's DMs and plans each; returns what to fetch and who could not be reached now. */
async function openDms(
  d: SessionDeps,
  s: Session,
  users: readonly string[],
): Promise<{ tasks: CatchUpTask[]; failed: string[] }> {
  const failed: string[] = [];
  const tasks: CatchUpTask[] = [];
  await Promise.all(
    users.map((user) =>
      d.runner
        .withSlot(() => d.openDm(user))
        .then((answer) => {
          const plan = planDm({ answer, known: s.known, since: s.since, ageFloor: s.ageFloor });
          if (plan.what === "fetch") tasks.push(plan.task);
          else if (plan.what === "invalid")
            d.log.warn({ user }, "opening a DM gave no DM channel; not caught up");
        })
        .catch((err) => {
          if (isTokenRejection(err)) d.tokenRejected();
          else if (isRefused(err))
            d.log.warn({ user, err: String(err) }, "Discord refused to open the DM of an allowlisted person");
          else failed.push(user);
        }),
    ),
  );
  return { tasks, failed };
}

/**
 * What a GUILD_CREATE of a guild listed in READY asks to fetch: its readable channels and active threads
 * that have something newer (its known channels become covered).
 */
function guildTasks(d: SessionDeps, s: Session, payload: unknown, bot: string): CatchUpTask[] {
  const guild = readGuild(payload, bot);
  if (!guild || !s.guilds.has(guild.guildId)) return [];
  const plan = planGuild({ channels: guild.channels, known: s.known, since: s.since, ageFloor: s.ageFloor });
  for (const id of plan.covered) s.covered.add(id);
  d.log.info(
    { guild: guild.guildId, channels: plan.tasks.length, quiet: plan.quiet, unreadable: plan.unreadable },
    "Discord guild: channels with something new queued for catch-up",
  );
  return plan.tasks;
}

/** A new session's starting point: the known channels and the mark as they are now. */
function beginSession(d: SessionDeps, rows: ChannelRow[], guildIds: readonly string[]): Session {
  return {
    known: new Map(rows.map((r) => [r.id, r])),
    since: startingMark(d.mark(), rows),
    ageFloor: snowflakeAt(d.now() - d.maxAgeMs),
    guilds: new Set(guildIds),
    covered: new Set(),
    planning: d.runner.hold("new"),
  };
}

export function createSessionCatchUp(d: SessionDeps) {
  const log = d.log;
  let session: Session | null = null;
  /** Allowlisted people whose DM could not be opened yet (they hold the mark back). */
  let failedDms: string[] = [];
  let dmTimer: ReturnType<typeof setTimeout> | null = null;

  /** Opens these people's DMs in a round of its own; those that failed are tried again later. */
  const openDmsInRound = (s: Session, users: readonly string[], how: string) => {
    const release = d.runner.hold(how);
    void openDms(d, s, users).then(({ tasks, failed }) => {
      if (session === s && !d.signal.aborted) {
        d.runner.run(tasks, how);
        failedDms = failed;
        if (failed.length > 0) {
          log.warn(
            { users: failed.length, retry_in_ms: d.retryMs },
            "could not open the DMs of allowlisted people; retrying",
          );
          dmTimer = setTimeout(() => openDmsInRound(s, failed, "retry"), d.retryMs);
        }
      }
      release();
    });
  };

  const dropSession = () => {
    session?.planning?.();
    if (dmTimer) clearTimeout(dmTimer);
    dmTimer = null;
    failedDms = [];
    session = null;
  };

  return {
    /**
     * At READY (new, with the guild ids it lists) or RESUMED, before any later dispatch. A new session
     * queues the known DMs (one history request each, as nothing tells whether they are quiet) and opens the
     * DM of every allowlisted person (POST /users/@me/channels answers the existing one with its
     * `last_message_id`).
     */
    onSession(how: "new" | "resumed", guildIds: readonly string[] = []): void {
      if (!d.enabled || d.signal.aborted) return;
      const rows = d.channels.ofSource("community_chat");
      if (how === "resumed") {
        d.runner.run(
          rows.flatMap((r) => knownTask(r) ?? []),
          "resumed",
        );
        return;
      }
      dropSession();
      const s = beginSession(d, rows, guildIds);
      session = s;
      d.runner.run(
        rows.filter((r) => r.id.startsWith(CHANNEL_PREFIX.dm)).flatMap((r) => knownTask(r) ?? []),
        "new",
      );
      if (s.since === null) {
        log.info({}, "first start: Discord history from before gw ran is not imported");
        return;
      }
      const bot = d.botId();
      const users = [...new Set(d.dmRecipients())].filter((u) => isSnowflake(u) && u !== bot);
      if (users.length > 0) openDmsInRound(s, users, "new");
    },

    /** A GUILD_CREATE payload, before discord.js or any later dispatch of that guild. */
    onGuild(payload: unknown): void {
      const s = session;
      const bot = d.botId();
      if (s && bot && !d.signal.aborted) d.runner.run(guildTasks(d, s, payload, bot), "new");
    },

    /** The shard is ready (after its guilds, or resumed): known guild channels left are queued. */
    onReady(): void {
      const s = session;
      if (!s?.planning) return;
      const left = [...s.known.values()].filter(
        (r) => r.id.startsWith(CHANNEL_PREFIX.channel) && !s.covered.has(r.id),
      );
      d.runner.run(
        left.flatMap((r) => knownTask(r) ?? []),
        "new",
      );
      s.planning();
      s.planning = null;
    },

    /** People whose DM could not be opened yet. */
    behind: () => failedDms.length,
    stop: dropSession,
  };
}

export type SessionCatchUp = ReturnType<typeof createSessionCatchUp>;
