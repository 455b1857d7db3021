/**
 * The Discord connector's health (pure), from the state of its gateway link (decisions.md, discord.md
 * §6): `starting` until the client is ready, `degraded` once login has taken longer than its deadline,
 * while reconnecting or restarting after a library fault (the detail names the error), or when no heartbeat was acknowledged within the silence window; `error` when
 * Discord refused the token or the intents (a person must act: the detail says what to do); `ok`
 * otherwise, with the age of the last acknowledged heartbeat.
 */
import type { ConnectorHealth } from "../connector.ts";

export type LinkPhase = "starting" | "ready" | "reconnecting" | "restarting" | "failed";

export interface LinkState {
  phase: LinkPhase;
  /** When the current phase began (epoch ms). */
  since: number;
  /** Why the link failed for good (phase `failed`), or the last retryable problem while starting. */
  problem: string | null;
  /** When the last acknowledged heartbeat was sent, if any. */
  lastAckAt: number | null;
}

export interface HealthLimits {
  loginDeadlineMs: number;
  silenceMs: number;
}

const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000));

export function linkHealth(s: LinkState, now: number, limits: HealthLimits): ConnectorHealth {
  const age = seconds(now - s.since);
  switch (s.phase) {
    case "failed":
      return { state: "error", detail: s.problem ?? "The Discord connection failed." };
    case "starting":
      if (now - s.since <= limits.loginDeadlineMs)
        return { state: "starting", detail: "Connecting to Discord." };
      return {
        state: "degraded",
        detail: `Still connecting to Discord after ${age} s${s.problem ? ` (${s.problem})` : ""}; retrying.`,
      };
    case "reconnecting":
      return { state: "degraded", detail: `Reconnecting to Discord (for ${age} s).` };
    case "restarting":
      return {
        state: "degraded",
        detail: `Restarting the Discord connection after an error inside ${s.problem ?? "discord.js"} (for ${age} s).`,
      };
    case "ready": {
      const heard = Math.max(s.lastAckAt ?? s.since, s.since);
      if (now - heard > limits.silenceMs)
        return {
          state: "degraded",
          detail: `Connected, but Discord has acknowledged no heartbeat for ${seconds(now - heard)} s.`,
        };
      return {
        state: "ok",
        detail:
          s.lastAckAt === null
            ? "Connected to Discord."
            : `Connected to Discord; last heartbeat acknowledged ${seconds(now - s.lastAckAt)} s ago.`,
      };
    }
  }
}
