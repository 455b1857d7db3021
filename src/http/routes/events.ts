/**
 * GET /events (extensions.md §1): visible events after a cursor, oldest first, with `next_since`; with
 * `wait`, an empty answer is held until an event is stored (then asked again), the wait ends, the client
 * goes away or the service stops; a wait that finds the table of held polls full is 503 SERVICE_BUSY with
 * Retry-After (long-poll-busy.ts), a ready page never is. Bearer and X-Agent-ID; bad `since`, `limit` or
 * `wait` are 400.
 */
import { Elysia } from "elysia";
import type { Clock } from "../../core/ports.ts";
import type { Arrivals } from "../../ingest/arrivals.ts";
import { type EventStore, toEvent } from "../../store/events.ts";
import { serviceBusy } from "../long-poll-busy.ts";
import { EventListResponse, EventsQuery, errorResponses } from "../schemas.ts";

export interface EventRouteDeps {
  events: EventStore;
  clock: Clock;
  /** Announces stored visible events (any arrival wakes every waiter). */
  eventArrivals: Arrivals;
}

const ANY = { source: null, channelId: null, sinceMs: null };

function page(deps: EventRouteDeps, since: string, limit: number) {
  const rows = deps.events.visibleAfter(since, limit);
  return { events: rows.map(toEvent), next_since: rows.at(-1)?.id ?? since };
}

export function eventRoutes(deps: EventRouteDeps) {
  return new Elysia({ name: "events" }).get(
    "/events",
    async ({ query, request }) => {
      const since = query.since ?? "";
      const limit = query.limit ?? 20;
      let answer = page(deps, since, limit);
      const deadline = deps.clock.now() + (query.wait ?? 0) * 1000;
      while (answer.events.length === 0 && deps.clock.now() < deadline) {
        const outcome = await deps.eventArrivals.wait(ANY, deadline - deps.clock.now(), request.signal);
        if (outcome === "full") throw serviceBusy(query.wait ?? 0);
        if (outcome !== "arrived") break;
        answer = page(deps, since, limit);
      }
      return answer;
    },
    {
      query: EventsQuery,
      response: { 200: EventListResponse, ...errorResponses(400, 401, 503) },
      detail: {
        summary: "Events: edits, deletes and reactions",
        description:
          "Visible events with an id greater than `since`, oldest first. An event shows only when its message is " +
          "visible and, for reactions, the reactor is allowlisted or the account's owner; gw's own actions never " +
          "show. With `wait`, an empty answer is held until an event is stored or the wait ends; when it would " +
          "have to wait and too many long polls are already held, 503 SERVICE_BUSY with `Retry-After` (seconds, " +
          "also in `details.retry_after_s`). A page with events is always answered.",
      },
    },
  );
}
