/**
 * GET /messages/search with hostile `q` (FTS5 operators and column syntax, quotes, unicode, control
 * characters, broken %-escapes, lengths around the limit) and random filters, through app.handle over a
 * store whose visible, quarantined and deleted messages are made of the same words: always 200 or 400 in
 * the envelope, never 5xx, and never a quarantined or deleted message in an answer.
 */
import fc from "fast-check";
import type { NormalizedMessage } from "../../../src/ingest/ingest.ts";
import { inbound } from "../../helpers/messages.ts";
import { answerProblem } from "./envelope.ts";
import { AUTH, DM, STRANGER, withApiService } from "./harness.ts";
import { searchQueryString, WORDS } from "./search-arbitraries.ts";
import { checkProperty, type FuzzItem, type Outcome, prng } from "./types.ts";

/** Messages of the fuzzed words: visible, quarantined and (later) deleted ones. */
function seedMessages(seed: number): { message: NormalizedMessage; visible: boolean; deleted: boolean }[] {
  const rand = prng(seed);
  const text = () =>
    Array.from({ length: 1 + Math.floor(rand() * 6) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(
      " ",
    );
  return Array.from({ length: 60 }, (_, i) => {
    const kind = i % 4;
    const stranger = kind === 1;
    const message = inbound({
      text: text(),
      direction: kind === 2 ? "outbound" : "inbound",
      ...(stranger
        ? {
            channel: { id: STRANGER, type: "dm" as const, platformRef: `any;-;${STRANGER}` },
            sender: { id: STRANGER, displayName: STRANGER },
          }
        : { sender: { id: DM, displayName: DM } }),
    });
    return { message, visible: !stranger, deleted: kind === 3 && i % 8 === 3 };
  });
}

export const searchQueryProperty: FuzzItem = {
  id: "search-query",
  tried:
    "GET /messages/search with hostile q (FTS5 operators, column filters, quotes, unicode, controls, broken %-escapes, 0–260 characters) and random source, channel_id and limit, over visible, quarantined and deleted messages of the same words",
  held: "always 200 or 400 VALIDATION_FAILED in the envelope, never 5xx; never a quarantined or deleted message",
  async run({ scale, seed }): Promise<Outcome> {
    return withApiService({}, async (s) => {
      const seeded = seedMessages(seed);
      const ids = s.svc.ingest({
        source: "device_messenger",
        messages: seeded.map((m) => m.message),
        cursor: null,
      });
      const changes = seeded
        .filter((m) => m.deleted)
        .map((m) => ({
          kind: "delete" as const,
          source: "device_messenger" as const,
          targetPlatformId: m.message.platformId,
          timestampMs: 0,
          dedupeKey: `delete:${m.message.platformId}`,
        }));
      s.svc.ingest({ source: "device_messenger", messages: [], cursor: null, changes });
      const forbidden = new Set([
        s.ids.quarantined,
        ...ids.filter((_, i) => !seeded[i]?.visible || seeded[i]?.deleted).map((o) => o.id),
      ]);
      const stats = new Map<number | string, number>();
      const out = await checkProperty(
        fc.asyncProperty(searchQueryString, async (query) => {
          const problem = await tryOne(s.handle, query, forbidden, stats);
          if (problem) throw new Error(`${problem} — for ?${query.slice(0, 300)}`);
        }),
        300 * scale,
        seed,
      );
      const notes = [
        `answers: ${[...stats].map(([k, n]) => `${k} ×${n}`).join(", ")} (found: messages in a 200)`,
      ];
      return { ...out, notes };
    });
  },
};

async function tryOne(
  handle: (r: Request) => Promise<Response>,
  query: string,
  forbidden: ReadonlySet<string>,
  stats: Map<number | string, number>,
): Promise<string | null> {
  const res = await handle(
    new Request(`http://localhost/messages/search?${query}`, { headers: { ...AUTH, "x-agent-id": "fuzz" } }),
  );
  const text = await res.text();
  stats.set(res.status, (stats.get(res.status) ?? 0) + 1);
  const problem = answerProblem(res.status, res.headers, text, "GET");
  if (problem) return problem;
  if (res.status !== 200 && res.status !== 400) return `status ${res.status}: ${text.slice(0, 200)}`;
  if (res.status === 400)
    return text.includes('"VALIDATION_FAILED"') ? null : `400 but ${text.slice(0, 200)}`;
  const body = JSON.parse(text) as { messages?: { id: string }[] };
  if (!Array.isArray(body.messages) || Object.keys(body).length !== 1)
    return `200 body ${text.slice(0, 200)}`;
  if (body.messages.length > 0) stats.set("found", (stats.get("found") ?? 0) + 1);
  const leaked = body.messages.find((m) => forbidden.has(m.id));
  return leaked ? `a quarantined or deleted message ${leaked.id} was found` : null;
}

export const searchItems = [searchQueryProperty];
