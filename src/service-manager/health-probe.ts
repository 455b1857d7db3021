/**
 * Whether the service answers: GET http://<GW_BIND_HOST>:<GW_BIND_PORT>/healthz with a short deadline
 * (runner; the URL builder is pure). A wildcard bind address is asked on loopback. Never throws: a
 * refused connection or a timeout is `answered: false` with the reason.
 */

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
  error: string | null;
}

export function healthUrl(host: string, port: number): string {
  const h = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return `http://${h.includes(":") ? `[${h}]` : h}:${port}/healthz`;
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
      connectors?: Record<string, { state?: unknown }>;
    };
    const connectors =
      body.connectors && typeof body.connectors === "object"
        ? Object.fromEntries(Object.entries(body.connectors).map(([k, v]) => [k, String(v?.state ?? "?")]))
        : null;
    return {
      ...answered,
      status: typeof body.status === "string" ? body.status : null,
      version: typeof body.version === "string" ? body.version : null,
      connectors,
    };
  } catch {
    return { ...answered, error: "the answer is not gw's /healthz JSON" };
  }
}
