/**
 * Child process of bench/pickup/pickup.ts: the agent that polls gw's `GET /messages/unread`, in its own process
 * so gw, the writer and the agent never share an event loop.
 *
 *   BENCH_GW_PORT=<port> BENCH_TOKEN=<bearer> bun run bench/pickup/agent.ts
 *
 * `{"cmd":"expect","text":…}` (sent right after a commit) adds a message to wait for. While any is
 * outstanding the agent polls `GET /messages/unread?limit=100` (X-Agent-ID bench-agent) every
 * BENCH_STEP_MS after the previous answer; each expected message it finds is reported as
 * `{"seen":<text>,"t":<arrival of the answer listing it>,"tMiss":<send time of the last answer that did
 * not>,"polls":n}`, and everything listed is marked read (`POST /messages/mark_read`). A message not
 * listed within BENCH_STUCK_MS is dropped from the wait (the parent counts it stuck). Polling only while
 * something is expected keeps the agent from loading gw between samples; a real agent polling all the
 * time would see each message at the same instant.
 */
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const port = Number(process.env.BENCH_GW_PORT);
const token = process.env.BENCH_TOKEN ?? "";
const STEP_MS = Number(process.env.BENCH_STEP_MS ?? 1);
const STUCK_MS = Number(process.env.BENCH_STUCK_MS ?? 5000);
const url = `http://127.0.0.1:${port}/messages/unread?limit=100`;
const markUrl = `http://127.0.0.1:${port}/messages/mark_read`;
const headers = { authorization: `Bearer ${token}`, "x-agent-id": "bench-agent" };

/** Expected text → when it was added and the polls spent on it. */
const expected = new Map<string, { since: number; polls: number; tMiss: number }>();
/** Listed (and marked read) before its `expect` arrived: reported when it does. */
const early = new Map<string, number>();
let loop: Promise<void> | null = null;
let stopping = false;

async function pollOnce(): Promise<void> {
  const tReq = now();
  const res = await fetch(url, { headers });
  const body = (await res.json()) as { messages?: { id: string; text: string }[] };
  const t = now();
  if (!res.ok || !body.messages)
    throw new Error(`GET /messages/unread: ${res.status} ${JSON.stringify(body)}`);
  for (const e of expected.values()) e.polls += 1;
  for (const m of body.messages) {
    const e = expected.get(m.text);
    if (!e) {
      early.set(m.text, t);
      continue;
    }
    expected.delete(m.text);
    emit({ seen: m.text, t, tMiss: e.tMiss, polls: e.polls });
  }
  for (const e of expected.values()) if (tReq > e.since) e.tMiss = tReq;
  if (body.messages.length > 0) {
    const r = await fetch(markUrl, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ message_ids: body.messages.map((m) => m.id) }),
    });
    if (!r.ok) throw new Error(`POST /messages/mark_read: ${r.status}`);
  }
  for (const [text, e] of expected) {
    if (t - e.since > STUCK_MS) {
      expected.delete(text);
      emit({ stuck: text, t });
    }
  }
}

function ensureLoop(): void {
  loop ??= (async () => {
    try {
      while (expected.size > 0 && !stopping) {
        await pollOnce();
        if (expected.size > 0 && STEP_MS > 0) await Bun.sleep(STEP_MS);
      }
    } catch (err) {
      emit({ error: String(err) });
    } finally {
      loop = null;
    }
  })();
}

emit({ ready: 0 });
await serveCommands(
  async () => {
    stopping = true;
    await loop;
  },
  (c) => {
    if (c.cmd === "expect") {
      const t = now();
      const text = String(c.text);
      const tEarly = early.get(text);
      if (tEarly !== undefined) {
        early.delete(text);
        emit({ seen: text, t: tEarly, tMiss: tEarly, polls: 0 });
        return { ok: true };
      }
      expected.set(text, { since: t, polls: 0, tMiss: t });
      ensureLoop();
      return { ok: true };
    }
    return { error: `unknown command ${c.cmd}` };
  },
);
