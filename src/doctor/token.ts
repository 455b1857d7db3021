/**
 * Whether the running `gw serve` accepts this shell's GW_BEARER_TOKEN (runner): one authenticated,
 * read-only request, `GET /channels?limit=1` as agent `gw-doctor` (one indexed read of the channel list;
 * it marks nothing read and sends nothing), bounded by PROBE_TIMEOUT_MS. The token is sent, never shown:
 * no line carries it, not even inside a fetch error.
 */
import { type Check, fail, ok, warn } from "./check.ts";

export const TOKEN_PROBE_PATH = "/channels?limit=1";
export const TOKEN_PROBE_AGENT = "gw-doctor";

export async function bearerTokenCheck(
  probe: { healthUrl: string; at: string; token: string; envFilePath: string; timeoutMs: number },
  fetcher: typeof fetch,
): Promise<Check> {
  const { at, token } = probe;
  let status: number;
  try {
    const res = await fetcher(new URL(TOKEN_PROBE_PATH, probe.healthUrl).href, {
      headers: { authorization: `Bearer ${token}`, "x-agent-id": TOKEN_PROBE_AGENT },
      redirect: "manual",
      signal: AbortSignal.timeout(probe.timeoutMs),
    });
    status = res.status;
    await res.body?.cancel();
  } catch (err) {
    const reason = String((err as Error).message ?? err)
      .split(token)
      .join("…");
    return warn(
      "bearer-token",
      `cannot ask the running service on ${at} whether it accepts GW_BEARER_TOKEN (${reason})`,
      "agents may get 401 if it was started with another token",
      "run gw doctor again",
    );
  }
  if (status >= 200 && status < 300)
    return ok("bearer-token", `GW_BEARER_TOKEN is accepted by the running service on ${at}`);
  if (status === 401)
    return fail(
      "bearer-token",
      `the running service on ${at} rejects this shell's GW_BEARER_TOKEN (HTTP 401)`,
      "agents get 401: it was started with another token",
      `use the token gw serve was started with: GW_BEARER_TOKEN in ${probe.envFilePath} when the login service runs it (gw service install), or the one gw demo's banner prints`,
    );
  return warn(
    "bearer-token",
    `the running service on ${at} answered HTTP ${status} to an authenticated GET /channels`,
    "whether it accepts GW_BEARER_TOKEN is not known",
    "look at the running service's log",
  );
}
