/**
 * Whether the service answers: GET http://<GW_BIND_HOST>:<GW_BIND_PORT>/healthz with a short deadline
 * (runner; the URL builder is pure). A wildcard bind address is asked on loopback. Never throws: a
 * refused connection or a timeout is `answered: false` with the reason.
 */
import { hostPort } from "../core/http-edge.ts";

export const HEALTH_TIMEOUT_MS = 2_000;

export interface HealthProbe {
  url: string;
  answered: boolean;
  httpStatus: number | null;
  /** /healthz `status`: ok or degraded. */
  status: string | null;
  version: string | null;
  /** Connector name → state (ok, disabled, starting, degraded, error). */
  connectors: Record<string, string> | null;
  /** Connector name → the one-sentence detail of its state. */
  details: Record<string, string> | null;
  /** Dead webhook deliveries, when the answer says. */
  deadWebhooks: number | null;
  error: string | null;
}

export function healthUrl(host: string, port: number): string {
  const h = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${hostPort(h, port)}/healthz`;
}

export function healthOk(h: HealthProbe): boolean {
  return h.answered && h.httpStatus === 200 && h.error === null;
}

export async function probeHealth(
  url: string,
  fetchFn: typeof fetch = fetch,
  timeoutMs = HEALTH_TIMEOUT_MS,
): Promise<HealthProbe> {
  const probe: HealthProbe = {
    url,
    answered: false,
    httpStatus: null,
    status: null,
    version: null,
    connectors: null,
    details: null,
    deadWebhooks: null,
    error: null,
  };
  let res: Response;
  try {
    res = await fetchFn(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error & { code?: string };
    const refused = /ECONNREFUSED|ConnectionRefused/.test(`${e.code} ${e.message}`);
    const error =
      e.name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : refused
          ? "connection refused: nothing listens there"
          : (e.message ?? String(err));
    return { ...probe, error };
  }
  const answered = { ...probe, answered: true, httpStatus: res.status };
  try {
    const body = (await res.json()) as {
      status?: unknown;
      version?: unknown;
      connectors?: Record<string, { state?: unknown; detail?: unknown }>;
      webhooks?: { dead?: unknown };
    };
    const each = (pick: (c: { state?: unknown; detail?: unknown }) => unknown) =>
      body.connectors && typeof body.connectors === "object"
        ? Object.fromEntries(
            Object.entries(body.connectors).map(([k, v]) => [k, String(pick(v ?? {}) ?? "?")]),
          )
        : null;
    return {
      ...answered,
      status: typeof body.status === "string" ? body.status : null,
      version: typeof body.version === "string" ? body.version : null,
      connectors: each((c) => c.state),
      details: each((c) => c.detail),
      deadWebhooks: typeof body.webhooks?.dead === "number" ? body.webhooks.dead : null,
    };
  } catch {
    return { ...answered, error: "the answer is not gw's /healthz JSON" };
  }
}
