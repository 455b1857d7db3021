/**
 * A webhook receiver spoken at the TCP level, for fault runs: each request gets what `plan` decides from
 * its delivery id and the envelope's channel (read from the first bytes of the body): a status (with a
 * Location for 3xx), a hang until the sender gives up, a reset in the middle of the request body, or a
 * 503 whose body is cut off. Every request is recorded with when its first byte came and when it ended
 * (reply written, reset, or the sender's close), so a retry gap is measured from one end to the next start.
 */
import type { Socket } from "bun";

export type FaultReply =
  | { status: number; location?: string }
  | "hang"
  /** Reset while the request body is still coming (no answer at all). */
  | "reset"
  /** `503` with a Content-Length the body never reaches, then a reset. */
  | "cut-503";

export interface FaultHit {
  deliveryId: string | null;
  channelId: string | null;
  reply: string;
  /** ms since the epoch (Date.now), first byte of the request. */
  start: number;
  /** ms since the epoch: reply written, reset, or the connection closed by the sender. */
  end: number | null;
  /** For "reset": bytes of the body not yet received when the connection was reset. */
  bodyMissing: number | null;
}

interface Conn {
  buf: Buffer;
  hit: FaultHit | null;
  /** Header block length including the blank line, and the body length announced; -1 until known. */
  headerLength: number;
  contentLength: number;
  reply: FaultReply | null;
  hanging: boolean;
}

const CHANNEL = /"channel_id":"((?:[^"\\]|\\.)*)"/;

export function faultReceiver(
  plan: (req: { deliveryId: string | null; channelId: string | null }) => FaultReply,
) {
  const hits: FaultHit[] = [];
  const sockets = new Set<Socket<Conn>>();

  const answer = (socket: Socket<Conn>, c: Conn, reply: FaultReply) => {
    const hit = c.hit as FaultHit;
    if (reply === "hang") {
      c.hanging = true;
      return;
    }
    if (reply === "reset") {
      hit.bodyMissing = Math.max(0, c.contentLength - (c.buf.length - c.headerLength));
      hit.end = Date.now();
      socket.terminate();
      return;
    }
    if (reply === "cut-503") {
      socket.write("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 1000\r\n\r\nthe receiver went aw");
      hit.end = Date.now();
      socket.terminate();
      return;
    }
    const location = reply.location ? `location: ${reply.location}\r\n` : "";
    socket.write(`HTTP/1.1 ${reply.status} X\r\ncontent-length: 0\r\n${location}\r\n`);
    hit.end = Date.now();
    // Keep-alive: the next request on this connection starts after this one's body.
    c.buf = c.buf.subarray(c.headerLength + c.contentLength);
    c.hit = null;
    c.headerLength = -1;
    c.contentLength = -1;
    c.reply = null;
    if (c.buf.length > 0) consume(socket, c);
  };

  const consume = (socket: Socket<Conn>, c: Conn) => {
    if (!c.hit) {
      c.hit = {
        deliveryId: null,
        channelId: null,
        reply: "",
        start: Date.now(),
        end: null,
        bodyMissing: null,
      };
      hits.push(c.hit);
    }
    if (c.headerLength < 0) {
      const at = c.buf.indexOf("\r\n\r\n");
      if (at < 0) return;
      c.headerLength = at + 4;
      const head = c.buf.subarray(0, at).toString("latin1").split("\r\n");
      const header = (name: string) =>
        head
          .find((l) => l.toLowerCase().startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim() ?? null;
      c.contentLength = Number(header("content-length") ?? 0);
      c.hit.deliveryId = header("x-gw-delivery-id");
    }
    const body = c.buf.subarray(c.headerLength);
    const complete = body.length >= c.contentLength;
    if (c.reply === null) {
      const channel = CHANNEL.exec(body.subarray(0, 4096).toString("utf8"));
      if (!channel && !complete) return;
      c.hit.channelId = channel ? (JSON.parse(`"${channel[1]}"`) as string) : null;
      c.reply = plan({ deliveryId: c.hit.deliveryId, channelId: c.hit.channelId });
      c.hit.reply = typeof c.reply === "string" ? c.reply : String(c.reply.status);
      if (c.reply === "reset") return answer(socket, c, c.reply);
    }
    if (complete) answer(socket, c, c.reply);
  };

  const server = Bun.listen<Conn>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        sockets.add(socket);
        socket.data = {
          buf: Buffer.alloc(0),
          hit: null,
          headerLength: -1,
          contentLength: -1,
          reply: null,
          hanging: false,
        };
      },
      data(socket, chunk) {
        const c = socket.data;
        if (c.hanging) return;
        c.buf = Buffer.concat([c.buf, chunk]);
        consume(socket, c);
      },
      close(socket) {
        sockets.delete(socket);
        const hit = socket.data.hit;
        if (hit && hit.end === null) hit.end = Date.now();
      },
      error() {},
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}/webhook`,
    hits,
    stop: () => {
      for (const s of sockets) s.terminate();
      server.stop(true);
    },
  };
}
