/**
 * The demo's webhook receiver: `POST /webhook` on 127.0.0.1 (a free port) checks every delivery exactly
 * as `gw receiver` does (receiver/verify.ts: X-GW-Signature over the raw bytes, the Standard Webhooks
 * headers and their timestamp) and, instead of running an agent, prints one line: delivery id, source,
 * channel, sender and a preview of the text (an event: what happened, as Claude Code's channel says it). Accepted deliveries get 204; a refused one gets the
 * receiver's status and error body, and a line saying why.
 */
import type { GwEvent } from "../core/event.ts";
import { eventNotification } from "../mcp/channel-events.ts";
import { verifyDelivery } from "../receiver/verify.ts";
import { preview } from "./script.ts";

/** Envelopes are a few KiB; `gw receiver` refuses more than this too. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface ReceiverSink {
  url: string;
  stop(): Promise<void>;
}

interface Delivered {
  source?: string;
  channel_id?: string;
  sender?: { display_name?: string; id?: string };
  text?: string;
}

export function startReceiverSink(o: {
  secret: string;
  print: (line: string) => void;
  /** A short name for a channel id, when the demo has one. */
  label?: (channelId: string) => string | null;
  now?: () => number;
}): ReceiverSink {
  const now = o.now ?? Date.now;
  const describe = (deliveryId: string, kind: string | null, body: Uint8Array): string => {
    let e: Delivered;
    try {
      e = JSON.parse(new TextDecoder().decode(body)) as Delivered;
    } catch {
      return `webhook   ${deliveryId}  (signed, but not JSON)`;
    }
    const channel = e.channel_id ? (o.label?.(e.channel_id) ?? e.channel_id) : "?";
    const sender = e.sender?.display_name || e.sender?.id || "?";
    const where = `${(e.source ?? "?").padEnd(16)}  ${channel.padEnd(15)}`;
    // An event delivery (X-GW-Event other than `message`): the line Claude Code's channel shows for it.
    if (kind !== null && kind !== "message")
      return `event     ${deliveryId}  ${where}  ${eventNotification(e as unknown as GwEvent, null).params.content}`;
    return `webhook   ${deliveryId}  ${where}  ${sender}: ${preview(e.text ?? "")}`;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    reusePort: false,
    maxRequestBodySize: MAX_BODY_BYTES,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/webhook" || req.method !== "POST")
        return new Response("not found", { status: 404 });
      const body = new Uint8Array(await req.arrayBuffer());
      const verdict = verifyDelivery(o.secret, req.headers, body, Math.floor(now() / 1000));
      if (!verdict.ok) {
        o.print(`webhook   refused (${verdict.error.status}): ${verdict.error.message}`);
        return Response.json(verdict.error.toEnvelope(), { status: verdict.error.status });
      }
      o.print(describe(verdict.deliveryId, req.headers.get("x-gw-event"), body));
      return new Response(null, { status: 204 });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}/webhook`,
    stop: () => server.stop(true),
  };
}
