/**
 * Child process of bench/pickup/pickup.ts: an agent that follows gw with the unread long poll, as an agent
 * should (no polling interval): `GET /messages/unread?wait=30&limit=100` in a loop (X-Agent-ID
 * bench-longpoll), marking what it got read. Prints `{"ready":0}`, then `{"seen":<text>,"t":<arrival of
 * the answer>}` per message, and answers the commands of lib/child-protocol.ts.
 *
 *   BENCH_GW_PORT=<port> BENCH_TOKEN=<bearer> bun run bench/pickup/longpoll.ts
 */
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const port = Number(process.env.BENCH_GW_PORT);
const base = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${process.env.BENCH_TOKEN ?? ""}`, "x-agent-id": "bench-longpoll" };
const stopping = new AbortController();

async function follow(): Promise<void> {
  while (!stopping.signal.aborted) {
    const res = await fetch(`${base}/messages/unread?wait=30&limit=100`, {
      headers,
      signal: stopping.signal,
    });
    const body = (await res.json()) as { messages?: { id: string; text: string }[] };
    const t = now();
    if (!res.ok || !body.messages)
      throw new Error(`GET /messages/unread: ${res.status} ${JSON.stringify(body)}`);
    for (const m of body.messages) emit({ seen: m.text, t });
    if (body.messages.length === 0) continue;
    const marked = await fetch(`${base}/messages/mark_read`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ message_ids: body.messages.map((m) => m.id) }),
      signal: stopping.signal,
    });
    if (!marked.ok) throw new Error(`POST /messages/mark_read: ${marked.status}`);
  }
}

const loop = follow().catch((err) => {
  if (!stopping.signal.aborted) emit({ error: String(err) });
});
emit({ ready: 0 });
await serveCommands(async () => {
  stopping.abort();
  await loop;
});
