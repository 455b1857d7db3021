/**
 * `gw doctor`'s checks of what runs (runner): the running `gw serve` (whether it accepts this shell's
 * token, its `/healthz` connector states beside this configuration's, its dead webhooks), or whether its
 * port is free; and the webhook target, sent one signed test delivery (`X-GW-Event: ping`) that
 * `gw receiver` verifies and does not run. Every request is bounded by PROBE_TIMEOUT_MS.
 */
import type { Config } from "../config/settings.ts";
import { hostPort } from "../core/http-edge.ts";
import { healthUrl, probeHealth } from "../service-manager/health-probe.ts";
import type { ServiceStatus } from "../service-manager/status.ts";
import { pingDelivery } from "../webhooks/sign.ts";
import { type Check, fail, ok, warn } from "./check.ts";
import { type Configured, connectorChecks, contradicted } from "./connectors.ts";
import { bearerTokenCheck } from "./token.ts";

export const PROBE_TIMEOUT_MS = 5_000;

/** What the running service reports, and the config-scope lines its connectors replace (connectors.ts). */
export interface RunningReport {
  checks: Check[];
  contradicted: string[];
}

export async function runningServiceChecks(
  config: Config,
  fetcher: typeof fetch,
  here: { configured: Record<string, Configured>; envFilePath: string },
): Promise<RunningReport> {
  const at = hostPort(config.bindHost, config.bindPort);
  const url = healthUrl(config.bindHost, config.bindPort);
  const health = await probeHealth(url, fetcher, PROBE_TIMEOUT_MS);
  if (!health.connectors) return { checks: [notServing(config)], contradicted: [] };
  const token = config.bearerToken ?? "";
  const probe = { healthUrl: url, at, token, envFilePath: here.envFilePath, timeoutMs: PROBE_TIMEOUT_MS };
  const checks = [
    ok("serve", `gw ${health.version ?? ""} is serving on ${at} (status ${health.status})`),
    ...(token ? [await bearerTokenCheck(probe, fetcher)] : []),
    ...connectorChecks(at, { connectors: health.connectors, details: health.details }, here.configured),
  ];
  const dead = health.deadWebhooks ?? 0;
  if (dead > 0)
    checks.push(
      warn(
        "webhooks-dead",
        `${dead} webhook deliveries are dead`,
        "their messages are still unread, but were not pushed",
        "see `gw webhooks list --status dead`, then `gw webhooks redeliver --all-dead`",
      ),
    );
  return { checks, contradicted: contradicted(health.connectors, here.configured) };
}

/** Nothing gw answers on the port: free (not running) or another program's. */
function notServing(config: Config): Check {
  const at = hostPort(config.bindHost, config.bindPort);
  if (portFree(config.bindHost, config.bindPort))
    return warn(
      "serve",
      `gw serve is not running on ${at}`,
      "agents and webhooks get nothing until it runs",
      "start it: `gw serve`, or run it at login: `gw service install`",
    );
  return fail(
    "serve",
    `port ${at} is taken by another program`,
    "gw serve cannot listen there",
    "set GW_BIND_PORT to a free port",
  );
}

function portFree(host: string, port: number): boolean {
  try {
    Bun.serve({ hostname: host, port, reusePort: false, fetch: () => new Response() }).stop(true);
    return true;
  } catch {
    return false;
  }
}

/** The login service (`gw service`): installed, loaded, running. Not installed is fine (gw runs by hand). */
export function loginServiceCheck(s: ServiceStatus): Check {
  const where = `${s.manager} ${s.name}`;
  if (!s.installed)
    return ok(
      "login-service",
      "no login service installed (gw runs when you start it; `gw service install` runs it at login)",
    );
  if (s.problem)
    return warn(
      "login-service",
      `cannot read the login service's state (${where})`,
      s.problem,
      "see `gw service status`",
    );
  if (!s.loaded)
    return fail(
      "login-service",
      `the login service ${where} is installed but not loaded`,
      "gw does not start at login",
      "`gw service install` loads it again",
    );
  if (!s.running)
    return fail(
      "login-service",
      `the login service ${where} is loaded but not running (last exit ${s.lastExit ?? s.lastExitCode ?? "unknown"})`,
      "launchd restarts it; a configuration error (exit 2) repeats until fixed",
      `look at the newest log in the log dir, fix it, then \`gw service install\``,
    );
  return ok(
    "login-service",
    `the login service ${where} is running (pid ${s.pid}${s.program ? `, ${s.program}` : ""})`,
  );
}

export async function webhookChecks(config: Config, fetcher: typeof fetch, nowS: number): Promise<Check[]> {
  // The configuration refuses GW_WEBHOOK_URL without GW_WEBHOOK_SECRET (exit 2), so both or neither.
  if (!config.webhookUrl || !config.webhookSecret)
    return [ok("webhook", "webhooks are off (set GW_WEBHOOK_URL to push messages)")];
  const url = config.webhookUrl;
  const ping = pingDelivery(config.webhookSecret, crypto.randomUUID(), nowS);
  let status: number;
  try {
    const res = await fetcher(url, {
      method: "POST",
      headers: ping.headers,
      body: ping.body,
      redirect: "manual",
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    status = res.status;
  } catch (err) {
    return [
      fail(
        "webhook",
        `nothing answers at GW_WEBHOOK_URL ${url} (${(err as Error).message})`,
        "deliveries are retried, then dead-lettered",
        "start the receiver (`gw receiver`) or correct GW_WEBHOOK_URL",
      ),
    ];
  }
  if (status >= 200 && status < 300)
    return [ok("webhook", `webhook target ${url} accepted a signed test delivery (HTTP ${status})`)];
  if (status === 401)
    return [
      fail(
        "webhook",
        `webhook target ${url} rejected the signature (HTTP 401)`,
        "every delivery would be dead-lettered",
        "give gw serve and the receiver the same GW_WEBHOOK_SECRET",
      ),
    ];
  if (status >= 500)
    return [
      warn(
        "webhook",
        `webhook target ${url} answered ${status} to a signed test delivery`,
        "deliveries are retried and dead-lettered after 5 attempts",
        "look at the receiver's log",
      ),
    ];
  return [
    (status === 400 ? warn : fail)(
      "webhook",
      `webhook target ${url} answered ${status} to a signed test delivery`,
      status === 400
        ? "a receiver other than gw receiver may refuse the test body; real deliveries may still pass"
        : "4xx answers dead-letter deliveries at once",
      "check GW_WEBHOOK_URL (gw receiver listens on /webhook)",
    ),
  ];
}
