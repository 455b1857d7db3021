/**
 * Posts a phone command's answer (GW_RECEIVER_COMMANDS, extensions §7), a runner over gw serve's HTTP API:
 * first the command (and the messages a /stop stopped or dropped) is marked read for the receiver's agent
 * id, so no later run lists it as unread and answers it, then the answer goes to the command's channel through POST /messages/send under answerKey(delivery
 * id). A try that got no answer, or a 429, is repeated under the same key, which never posts twice; a 5xx
 * (cached by the service under that key) or a 4xx ends it. Failures are logged, never retried further.
 */
import type { Envelope } from "../core/envelope.ts";
import type { Logger } from "../core/ports.ts";
import type { ApiClient } from "../mcp/api-client.ts";
import { retryAfterS } from "../mcp/backoff.ts";
import { answerKey } from "./commands.ts";

/** The pause before each try of one answer post. */
export const ANSWER_DELAYS_MS = [0, 500, 2_000, 5_000] as const;
/** The longest 429 wait honoured between tries. */
export const ANSWER_RETRY_AFTER_MAX_MS = 10_000;

export function createAnswerer(deps: { api: ApiClient; log: Logger }) {
  const cut = new AbortController();
  const pending = new Set<Promise<void>>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0 || cut.signal.aborted) return resolve();
      const t = setTimeout(resolve, ms);
      cut.signal.addEventListener(
        "abort",
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });

  const post = async (m: Envelope, deliveryId: string, text: string, alsoRead: string[]): Promise<void> => {
    const ids = { delivery_id: deliveryId, channel_id: m.channel_id };
    const read = await deps.api.call("POST", "/messages/mark_read", {
      body: { message_ids: [m.id, ...alsoRead] },
      signal: cut.signal,
    });
    if (!read.ok) deps.log.warn({ ...ids, status: read.status }, "command not marked read");
    let wait = 0;
    for (const delay of ANSWER_DELAYS_MS) {
      await sleep(Math.max(delay, wait));
      if (cut.signal.aborted) break;
      const res = await deps.api.call("POST", "/messages/send", {
        body: { channel_id: m.channel_id, text },
        idempotencyKey: answerKey(deliveryId),
        signal: cut.signal,
      });
      if (res.ok) return deps.log.info(ids, "command answered");
      if (res.status !== 0 && res.status !== 429) {
        deps.log.warn({ ...ids, status: res.status, body: res.body }, "command answer not sent");
        return;
      }
      wait = res.status === 429 ? Math.min(ANSWER_RETRY_AFTER_MAX_MS, (retryAfterS(res) ?? 1) * 1000) : 0;
    }
    deps.log.warn(ids, "command answer not sent: gw serve did not take it");
  };

  return {
    /**
     * Answers the command `m` in its channel, after `after` settles (a /stop answers once the run ended),
     * marking `alsoRead` read with it.
     */
    answer(
      m: Envelope,
      deliveryId: string,
      text: () => string,
      o: { after?: Promise<unknown>; alsoRead?: string[] } = {},
    ) {
      const p = (o.after ?? Promise.resolve()).then(() => post(m, deliveryId, text(), o.alsoRead ?? []));
      pending.add(p);
      void p.finally(() => pending.delete(p));
    },
    /** Cuts off answers still being tried. */
    async stop(): Promise<void> {
      cut.abort();
      await Promise.allSettled(pending);
    },
  };
}

export type Answerer = ReturnType<typeof createAnswerer>;
