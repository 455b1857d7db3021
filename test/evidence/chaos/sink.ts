/**
 * The webhook receiver of the chaos runs: it lives in the test process, so it outlives every kill of
 * gw serve. Each request's signature is checked as gw receiver checks it (verifyDelivery); it dedupes
 * on the delivery id, as receivers must, and remembers per id how often it came and whether it was
 * accepted. What it answers comes from a marker in the message text: `[doom]` is answered 500 every
 * time (the delivery must end `dead`), `[flaky]` 500 for the first FLAKY_FAILURES requests of a
 * delivery id, anything else 204.
 */
import { verifyDelivery } from "../../../src/receiver/verify.ts";

export const DOOM = "[doom]";
export const FLAKY = "[flaky]";
export const FLAKY_FAILURES = 2;

export interface SinkDelivery {
  deliveryId: string;
  messageId: string;
  text: string;
  /** Requests that carried this delivery id. */
  hits: number;
  /** Requests answered 2xx (more than one: a redelivery after a kill, deduped here). */
  accepted: number;
}

export function chaosSink(secret: string) {
  const byId = new Map<string, SinkDelivery>();
  let requests = 0;
  let badSignatures = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(req) {
      requests += 1;
      const body = new Uint8Array(await req.arrayBuffer());
      const verdict = verifyDelivery(secret, req.headers, body, Math.floor(Date.now() / 1000));
      if (!verdict.ok) {
        badSignatures += 1;
        return new Response(null, { status: verdict.error.status });
      }
      const envelope = JSON.parse(new TextDecoder().decode(body)) as { id: string; text: string };
      const d = byId.get(verdict.deliveryId) ?? {
        deliveryId: verdict.deliveryId,
        messageId: envelope.id,
        text: envelope.text,
        hits: 0,
        accepted: 0,
      };
      byId.set(d.deliveryId, d);
      d.hits += 1;
      const fail =
        envelope.text.includes(DOOM) || (envelope.text.includes(FLAKY) && d.hits <= FLAKY_FAILURES);
      if (fail) return new Response("chaos: failing on purpose", { status: 500 });
      d.accepted += 1;
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/webhook`,
    deliveries: (): SinkDelivery[] => [...byId.values()].map((d) => ({ ...d })),
    requests: () => requests,
    badSignatures: () => badSignatures,
    stop: () => server.stop(true),
  };
}

export type ChaosSink = ReturnType<typeof chaosSink>;
