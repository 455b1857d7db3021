/**
 * The running service's connectors beside this shell's configuration (pure). One check per connector
 * that /healthz lists: where both agree, the connector's state (`running gw serve: <name> is <state>`);
 * where the running service runs a connector this configuration would not, or the reverse, one line
 * that says so plainly (it was started with another configuration). `contradicted` names the config
 * lines ("iMessage is off …") that such a line replaces, so the report never says both.
 */
import { type Check, fail, ok, warn } from "./check.ts";

/** Whether this shell's configuration would run a connector, and the setting that decides it. */
export interface Configured {
  on: boolean;
  /** A few words naming the setting: "GW_CHAT_DB_PATH unset", "GW_COMMUNITY_BOT_TOKEN set". */
  because: string;
}

interface Known {
  runs: string;
  doesNot: string;
  /** What is lost when the running service does not run it. */
  lost: string;
  /** The id of the config-scope line that says this configuration leaves the connector off. */
  offCheck: string;
}

const KNOWN: Record<string, Known> = {
  device_messenger: {
    runs: "reads iMessage",
    doesNot: "does not read iMessage",
    lost: "no iMessage reaches agents through it",
    offCheck: "imessage",
  },
  community_chat: {
    runs: "connects to Discord",
    doesNot: "does not connect to Discord",
    lost: "no Discord message reaches agents through it",
    offCheck: "discord",
  },
};

export function configuredConnectors(config: {
  deviceMessengerOn: boolean;
  chatDbPath: string;
  communityBotToken: string | null;
}): Record<string, Configured> {
  return {
    device_messenger: config.deviceMessengerOn
      ? { on: true, because: `chat.db at ${config.chatDbPath}` }
      : { on: false, because: "GW_CHAT_DB_PATH unset" },
    community_chat: config.communityBotToken
      ? { on: true, because: "GW_COMMUNITY_BOT_TOKEN set" }
      : { on: false, because: "GW_COMMUNITY_BOT_TOKEN unset" },
  };
}

const runs = (state: string) => state !== "disabled";

/** The config-scope check ids a running connector contradicts (this configuration has it off, it runs). */
export function contradicted(
  connectors: Record<string, string>,
  configured: Record<string, Configured>,
): string[] {
  return Object.entries(connectors).flatMap(([name, state]) => {
    const known = KNOWN[name];
    return known && configured[name]?.on === false && runs(state) ? [known.offCheck] : [];
  });
}

export function connectorChecks(
  at: string,
  health: { connectors: Record<string, string>; details: Record<string, string> | null },
  configured: Record<string, Configured>,
): Check[] {
  return Object.entries(health.connectors).map(([name, state]) => {
    const id = `serve-${name}`;
    const detail = health.details?.[name] ?? "";
    const known = KNOWN[name];
    const here = configured[name];
    if (!known || !here || here.on === runs(state))
      return stateCheck(id, `running gw serve: ${name} is ${state}`, state, detail);
    const other = "it was started with another configuration";
    if (runs(state))
      return stateCheck(
        id,
        `the running service on ${at} ${known.runs} (${name} ${state}); this shell's configuration would not (${here.because}): ${other}`,
        state,
        detail,
      );
    return warn(
      id,
      `the running service on ${at} ${known.doesNot} (${name} disabled); this shell's configuration would (${here.because}): ${other}`,
      known.lost,
      "stop that service and start `gw serve` from this shell, or give the service that runs it the same setting and restart it",
    );
  });
}

/** A connector state as a check: ok and disabled pass, error fails, the rest (starting, degraded) warn. */
function stateCheck(id: string, what: string, state: string, detail: string): Check {
  if (state === "ok" || state === "disabled") return ok(id, what);
  if (state === "error") return fail(id, what, detail, "fix that, then restart gw serve");
  return warn(id, what, detail, "wait a moment and run gw doctor again");
}
