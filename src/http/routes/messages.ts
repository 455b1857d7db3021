/**
 * Reading routes (spec A, B, C, D, F): unread, single message, context, mark_read, quarantine.
 * Thin: validate through the schemas, call the store, map rows to Envelopes. The bearer and
 * X-Agent-ID checks ran in app.ts before any of this. Unread with `wait` (decisions.md) holds an empty
 * answer on `arrivals` until a matching allowlisted message is stored or the wait ends; when it would have
 * to wait and the table of held polls is full, it answers 503 SERVICE_BUSY (long-poll-busy.ts).
 */
import { Elysia } from "elysia";
import { EnvelopeSchema } from "../../core/envelope.ts";
import { AppError } from "../../core/errors.ts";
import type { Clock } from "../../core/ports.ts";
import { canonicalTimestamp, formatTimestamp, parseTimestamp } from "../../core/time.ts";
import type { Arrivals } from "../../ingest/arrivals.ts";
import { envelopeJson } from "../../store/envelope.ts";
import type { MessageRow } from "../../store/messages.ts";
import type { Store } from "../../store/store.ts";
import { agentIdOf } from "../agent-id.ts";
import { serviceBusy } from "../long-poll-busy.ts";
import {
  ContextQuery,
  ContextResponse,
  errorResponses,
  MarkReadRequest,
  MarkReadResponse,
  MessageIdParams,
  MessageListResponse,
  QuarantineQuery,
  UnreadQuery,
} from "../schemas.ts";

export const LIMIT_DEFAULT = 20;
export const LIMIT_MAX = 100;

export interface MessageRouteDeps {
  store: Store;
  /** Wakes held unread long polls when a matching message is stored. */
  arrivals: Arrivals;
  clock: Clock;
  /** Base of adapter-hosted attachment URLs, e.g. http://127.0.0.1:8080. */
  publicBaseUrl: string;
}

function parseSince(since: string | undefined): number | null {
  if (since === undefined) return null;
  const ms = parseTimestamp(since);
  if (ms === null) {
    throw new AppError(
      "VALIDATION_FAILED",
      "since must be an RFC 3339 date-time, e.g. 2026-01-02T03:04:05Z.",
      { field: "since", reason: "not RFC 3339" },
      { status: 400 },
    );
  }
  return ms;
}

/** `next_since`: the newest returned timestamp, else the canonical `since`, else "". */
function nextSince(messages: readonly MessageRow[], since: string | undefined): string {
  if (messages.length > 0) return formatTimestamp(Math.max(...messages.map((m) => m.message_ts)));
  return since === undefined ? "" : (canonicalTimestamp(since) ?? "");
}

const notFound = (id: string) =>
  new AppError("MESSAGE_NOT_FOUND", "No visible message has this id.", { message_id: id });

/** A JSON answer written by hand: Elysia neither re-serialises nor re-validates a Response. */
export const json = (text: string) => new Response(text, { headers: { "content-type": "application/json" } });

/**
 * A page of envelopes as JSON (one attachment query for the whole page). The response schemas below
 * document these answers; they are not checked at run time (envelopeJson's test pins the shape).
 */
export function envelopes(
  deps: Pick<MessageRouteDeps, "store" | "publicBaseUrl">,
  rows: readonly MessageRow[],
): string {
  const atts = deps.store.attachments.forMessages(rows.map((r) => r.id));
  return `[${rows.map((r) => envelopeJson(r, atts.get(r.id) ?? [], deps.publicBaseUrl)).join(",")}]`;
}

function list(deps: MessageRouteDeps, rows: readonly MessageRow[], since: string | undefined): Response {
  return json(`{"messages":${envelopes(deps, rows)},"next_since":${JSON.stringify(nextSince(rows, since))}}`);
}

/**
 * Unread for this agent; with `wait`, an empty answer is held until a matching message is stored (then
 * asked again: another request may have read it meanwhile), the wait ends, the client goes away or the
 * service stops. A wait that finds the table full is 503 SERVICE_BUSY; a ready page never waits for a place.
 */
function unreadAnswer(
  deps: MessageRouteDeps,
  query: typeof UnreadQuery.static,
  request: Request,
): Response | Promise<Response> {
  const filter = {
    source: query.source ?? null,
    channelId: query.channel_id ?? null,
    sinceMs: parseSince(query.since),
    limit: Math.min(query.limit ?? LIMIT_DEFAULT, LIMIT_MAX),
  };
  const agent = agentIdOf(request);
  const rows = deps.store.reads.unread(agent, filter);
  const waitS = query.wait ?? 0;
  if (rows.length > 0 || waitS === 0) return list(deps, rows, query.since);
  return (async () => {
    const deadline = deps.clock.now() + waitS * 1000;
    let found = rows;
    while (found.length === 0) {
      const outcome = await deps.arrivals.wait(filter, deadline - deps.clock.now(), request.signal);
      if (outcome === "full") throw serviceBusy(waitS);
      if (outcome !== "arrived") break;
      found = deps.store.reads.unread(agent, filter);
    }
    return list(deps, found, query.since);
  })();
}

export function messageRoutes(deps: MessageRouteDeps) {
  const { store } = deps;
  return new Elysia({ name: "messages" })
    .get("/messages/unread", ({ query, request }) => unreadAnswer(deps, query, request), {
      query: UnreadQuery,
      response: { 200: MessageListResponse, ...errorResponses(400, 401, 503) },
      detail: {
        summary: "Unread messages for this agent",
        description:
          "Allowlisted messages this agent has not marked read, oldest first (ties by id). With `wait`, an " +
          "empty answer is held until a matching message arrives or the wait ends (long poll). When it would " +
          "have to wait and too many long polls are already held, it answers 503 SERVICE_BUSY with " +
          "`Retry-After` (seconds, also in `details.retry_after_s`); a page with messages is always answered.",
      },
    })
    .get(
      "/messages/quarantine",
      ({ query }) => {
        const before = query.before === undefined ? null : store.messages.get(query.before);
        if (query.before !== undefined && before?.allowlist_status !== "unknown")
          throw new AppError(
            "VALIDATION_FAILED",
            "before must be the id of a quarantined message: the last one of the previous page.",
            { field: "before", reason: "not a quarantined message" },
            { status: 400 },
          );
        const rows = store.messages.quarantine(
          parseSince(query.since),
          Math.min(query.limit ?? LIMIT_DEFAULT, LIMIT_MAX),
          before,
        );
        return list(deps, rows, query.since);
      },
      {
        query: QuarantineQuery,
        response: { 200: MessageListResponse, ...errorResponses(400, 401) },
        detail: {
          summary: "Quarantined messages",
          description:
            "Messages from senders not on the allowlist, newest first. `next_since` is the newest timestamp " +
            "returned (the spec's rule), so following it only ever reads newer messages; to read the whole " +
            "quarantine, pass the last message of each page as `before` until a page comes back short.",
        },
      },
    )
    .get(
      "/messages/context",
      ({ query }) => {
        const target = store.messages.get(query.around_message_id);
        if (target?.allowlist_status !== "allowed" || target.channel_id !== query.channel_id) {
          throw notFound(query.around_message_id);
        }
        return json(
          `{"messages":${envelopes(deps, store.messages.context(target, query.before ?? 5, query.after ?? 5))}}`,
        );
      },
      {
        query: ContextQuery,
        response: { 200: ContextResponse, ...errorResponses(400, 401, 404, 422) },
        detail: {
          summary: "Messages around one message",
          description:
            "Up to `before` older and `after` newer visible messages (allowed or outbound) in the channel.",
        },
      },
    )
    .post(
      "/messages/mark_read",
      ({ body, request }) => ({
        marked_count: store.reads.markRead(agentIdOf(request), body.message_ids, deps.clock.now()),
      }),
      {
        parse: "json",
        body: MarkReadRequest,
        response: { 200: MarkReadResponse, ...errorResponses(400, 401, 422) },
        detail: { summary: "Mark messages read for this agent", description: "Counts unique submitted ids." },
      },
    )
    .get(
      "/messages/:message_id",
      ({ params }) => {
        const row = store.messages.get(params.message_id);
        if (!row || row.allowlist_status === "unknown" || row.allowlist_status === "deleted")
          throw notFound(params.message_id);
        return json(envelopeJson(row, store.attachments.forMessage(row.id), deps.publicBaseUrl));
      },
      {
        params: MessageIdParams,
        response: { 200: EnvelopeSchema, ...errorResponses(400, 401, 404, 422) },
        detail: { summary: "One message", description: "Quarantined messages answer 404." },
      },
    );
}
