/**
 * The webhook dispatcher (runner). Claims due `pending` deliveries, POSTs the message's Envelope signed with
 * signedHeaders, and records the attempt with the state change nextStep decides. At-least-once: stored times
 * make it resume after a restart, and an attempt cut short by a crash is made again under the same delivery
 * id (receivers dedupe). At most MAX_IN_FLIGHT attempts run at once and one per channel, so a slow receiver
 * cannot starve the service and a channel's deliveries go out one at a time, oldest due first.
 */
import type { Clock, Logger } from "../core/ports.ts";
import type { DeliveryRow } from "../store/deliveries.ts";
import { envelopeJson } from "../store/envelope.ts";
import { toEvent } from "../store/events.ts";
import type { Store } from "../store/store.ts";
import { type AttemptResult, nextStep } from "./schedule.ts";
import { EVENT_HEADER, signedHeaders } from "./sign.ts";

export const MAX_IN_FLIGHT = 4;
/** Safety net: look for due rows at least this often even without a wake-up. */
export const HEARTBEAT_MS = 1000;
/** After the store failed to record finished attempts, recording them is tried again this often. */
export const RECORD_RETRY_MS = 1000;

export interface DispatcherDeps {
  store: Store;
  /** Set when event kinds are pushed too: every delivery then says what it is (`X-GW-Event`). */
  labelEvents?: boolean;
  url: string;
  secret: string;
  delaysMs: readonly number[];
  timeoutMs: number;
  publicBaseUrl: string;
  clock: Clock;
  log: Logger;
  fetch: typeof fetch;
  random: () => number;
}

type AttemptFields = Parameters<Store["deliveries"]["recordAttempt"]>[1];

/**
 * One POST of a delivery's signed body; a timeout or a connection failure is an error result. Redirects
 * are not followed.
 */
async function post(deps: DispatcherDeps, row: DeliveryRow, body: Body): Promise<AttemptResult> {
  const headers: Record<string, string> = {
    ...signedHeaders(deps.secret, row.id, Math.floor(deps.clock.now() / 1000), body.json),
  };
  if (deps.labelEvents) headers[EVENT_HEADER] = body.kind;
  try {
    const res = await deps.fetch(deps.url, {
      method: "POST",
      headers,
      body: body.json,
      redirect: "manual",
      signal: AbortSignal.timeout(deps.timeoutMs),
    });
    await res.body?.cancel();
    return { status: res.status };
  } catch (err) {
    const e = err as Error;
    return {
      error: e.name === "TimeoutError" ? `timed out after ${deps.timeoutMs} ms` : e.message || String(err),
    };
  }
}

/** What a delivery posts: the message's envelope, or its event (extensions.md §1). */
interface Body {
  kind: string;
  json: string;
}

function bodyOf(deps: DispatcherDeps, row: DeliveryRow): Body | null {
  const { store } = deps;
  if (row.event_id !== null) {
    const event = store.events.get(row.event_id);
    // Nothing about a deleted message goes out again but the news that it was deleted.
    if (!event || (event.kind !== "message.deleted" && store.deliveries.isPurged(row.id))) return null;
    return { kind: event.kind, json: JSON.stringify(toEvent(event)) };
  }
  const message = store.messages.get(row.message_id);
  if (!message || message.allowlist_status === "deleted") return null;
  return {
    kind: "message",
    json: envelopeJson(message, store.attachments.forMessage(message.id), deps.publicBaseUrl),
  };
}

/** One attempt of a delivery: what to record (the next state from the schedule), logged. */
async function attempt(deps: DispatcherDeps, row: DeliveryRow): Promise<AttemptFields> {
  const { log } = deps;
  const attempts = row.attempt_count + 1;
  const body = bodyOf(deps, row);
  if (!body) {
    const error = "the message or event of this delivery is not in the store (or was deleted)";
    log.error({ delivery_id: row.id }, error);
    return { status: "dead", attempts, nextAt: null, code: null, error };
  }
  const result = await post(deps, row, body);
  const next = nextStep(attempts, result, deps.delaysMs, deps.random());
  const outcome = { delivery_id: row.id, attempt: attempts, ...result, next: next.state };
  if (next.state === "dead") log.warn(outcome, "webhook delivery dead-lettered; the message stays unread");
  else if (next.state === "retry") log.info(outcome, "webhook attempt failed; will retry");
  else log.debug(outcome, "webhook delivered");
  return {
    status: next.state === "retry" ? "pending" : next.state,
    attempts,
    nextAt: next.state === "retry" ? deps.clock.now() + next.delayMs : null,
    code: "status" in result ? result.status : null,
    error: "error" in result ? result.error : next.state === "dead" ? next.reason : null,
  };
}

/**
 * Records finished attempts: those that end in one event-loop turn in one transaction, then `recorded`
 * frees their slots. When the store refuses (disk full) the outcomes are kept, their slots stay taken
 * (the rows are still due, so a free slot would post them again at once), and recording is tried again
 * every RECORD_RETRY_MS while `active()`.
 */
function createAttemptRecorder(
  deps: DispatcherDeps,
  recorded: (rows: DeliveryRow[]) => void,
  active: () => boolean,
) {
  const finished: { row: DeliveryRow; fields: AttemptFields; now: number }[] = [];
  let flushQueued = false;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let failingSince: number | null = null;

  const flush = (): void => {
    flushQueued = false;
    const batch = finished.splice(0);
    if (batch.length === 0) return;
    try {
      deps.store.transaction(() => {
        for (const f of batch) deps.store.deliveries.recordAttempt(f.row.id, f.fields, f.now);
      });
    } catch (err) {
      const now = deps.clock.now();
      if (failingSince === null || now - failingSince >= 60_000) {
        failingSince = now;
        deps.log.error(
          { err: String(err), deliveries: batch.length, retry_ms: RECORD_RETRY_MS },
          "webhook attempts could not be recorded; retrying",
        );
      }
      finished.unshift(...batch);
      if (active() && !retry)
        retry = setTimeout(() => {
          retry = null;
          flush();
        }, RECORD_RETRY_MS);
      return;
    }
    failingSince = null;
    recorded(batch.map((f) => f.row));
  };

  return {
    add(row: DeliveryRow, fields: AttemptFields): void {
      finished.push({ row, fields, now: deps.clock.now() });
      if (!flushQueued) {
        flushQueued = true;
        setImmediate(flush);
      }
    },
    /** Records what is left now (at stop; if the store still refuses, the attempts are made again later). */
    flush,
    stop(): void {
      if (retry) clearTimeout(retry);
    },
  };
}

export function createDispatcher(deps: DispatcherDeps) {
  const { store, log } = deps;
  const inFlight = new Map<string, Promise<void>>();
  const busyChannels = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running = false;
  /** Due rows fetched but not started yet (their channel was busy, or no slot was free). */
  let queue: DeliveryRow[] = [];

  const recorder = createAttemptRecorder(
    deps,
    (rows) => {
      for (const row of rows) {
        inFlight.delete(row.id);
        busyChannels.delete(row.channel_id);
      }
      pump();
    },
    () => running,
  );

  const schedule = () => {
    if (!running) return;
    if (timer) clearTimeout(timer);
    const next = store.deliveries.nextDueAt();
    const wait = next === null ? HEARTBEAT_MS : Math.min(HEARTBEAT_MS, Math.max(0, next - deps.clock.now()));
    timer = setTimeout(pump, wait);
  };

  /** Starts queued rows whose channel is free while slots remain; returns how many started. */
  const startQueued = (): number => {
    let started = 0;
    queue = queue.filter((row) => {
      if (inFlight.size >= MAX_IN_FLIGHT || busyChannels.has(row.channel_id)) return true;
      busyChannels.add(row.channel_id);
      inFlight.set(
        row.id,
        attempt(deps, row).then(
          (fields) => recorder.add(row, fields),
          (err) => {
            // Nothing recorded: free the slot; the row is still due and is tried again.
            log.error({ err: String(err), delivery_id: row.id }, "webhook attempt failed");
            inFlight.delete(row.id);
            busyChannels.delete(row.channel_id);
          },
        ),
      );
      started += 1;
      return false;
    });
    return started;
  };

  /** Due rows are fetched in batches (and recorded per event-loop turn): the store is not the bottleneck. */
  function pump(): void {
    if (!running) return;
    try {
      startQueued();
      if (inFlight.size < MAX_IN_FLIGHT) {
        const known = new Set([...inFlight.keys(), ...queue.map((r) => r.id)]);
        queue.push(...store.deliveries.due(deps.clock.now(), 64).filter((r) => !known.has(r.id)));
        startQueued();
      }
    } catch (err) {
      log.error({ err: String(err) }, "webhook dispatcher could not read the outbox; retrying");
    }
    schedule();
  }

  return {
    start(): void {
      running = true;
      pump();
    },
    /** New deliveries were stored: look now rather than at the next timer. */
    wake(): void {
      if (running) queueMicrotask(pump);
    },
    /** Stops claiming rows and waits for the attempts in flight (each bounded by its timeout). */
    async stop(): Promise<void> {
      running = false;
      if (timer) clearTimeout(timer);
      recorder.stop();
      await Promise.all(inFlight.values());
      recorder.flush();
    },
    inFlight: () => inFlight.size,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
