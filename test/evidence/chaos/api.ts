/**
 * Talking to a gw serve that may be killed at any instant: every call has a deadline, and a call that
 * got no answer (refused, reset, timed out) resolves to `{ status: 0 }` instead of throwing, because
 * "no answer" is an outcome the chaos runs must record, not an error of the runner.
 */
import { waitFor } from "../../helpers/process.ts";
import type { World } from "./world.ts";

export const CALL_TIMEOUT_MS = 15_000;

export interface Answer {
  /** 0: no answer. */
  status: number;
  body: unknown;
}

export async function call(
  w: World,
  method: string,
  path: string,
  o: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  try {
    const res = await fetch(`${w.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${w.env.GW_BEARER_TOKEN}`,
        ...(o.body === undefined ? {} : { "content-type": "application/json" }),
        ...o.headers,
      },
      ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
      signal: AbortSignal.timeout(o.timeoutMs ?? CALL_TIMEOUT_MS),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body };
  } catch {
    return { status: 0, body: null };
  }
}

interface HealthBody {
  connectors: Record<string, { state: string }>;
  webhooks: { queue_depth: number; dead: number };
}

export async function health(w: World): Promise<HealthBody | undefined> {
  const a = await call(w, "GET", "/healthz", { timeoutMs: 2_000 });
  return a.status === 200 ? (a.body as HealthBody) : undefined;
}

/** Until both connectors report `ok` (Discord logged in, chat.db open and read once). */
export function untilReady(w: World, timeoutMs = 20_000): Promise<HealthBody> {
  return waitFor(
    async () => {
      const h = await health(w);
      return h?.connectors.device_messenger?.state === "ok" && h.connectors.community_chat?.state === "ok"
        ? h
        : undefined;
    },
    "gw serve ready (both connectors ok)",
    timeoutMs,
  );
}
