/**
 * The receiver's HTTP face (spec I): exactly `POST /webhook` and `GET /healthz`, as a fetch handler
 * (`gw receiver` serves it; tests call it with Requests). A delivery is answered 204 once its journal row is
 * committed, never after the agent; a delivery id seen before, a verified test delivery (`X-GW-Event:
 * ping`, from `gw doctor`) and an event delivery (`X-GW-Event: <kind>`) get 204 and run nothing. Every error body is the spec's envelope.
 * `/healthz` needs no bearer and tells liveness and the worker counts.
 */
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type Envelope, EnvelopeSchema } from "../core/envelope.ts";
import { AppError } from "../core/errors.ts";
import { EVENT_KINDS, EventSchema } from "../core/event.ts";
import { bodySizeError, bodyUnread, pathOf } from "../core/http-edge.ts";
import type { Clock, Logger } from "../core/ports.ts";
import { EVENT_HEADER, PING_EVENT } from "../webhooks/sign.ts";
import type { Job } from "./channel-workers.ts";
import type { Accepted } from "./intake.ts";
import { verifyDelivery } from "./verify.ts";

/** The part of intake.ts the HTTP face uses. */
export interface ReceiverIntake {
  seen(deliveryId: string): boolean;
  acknowledge(deliveryId: string): void;
  accept(job: Job, envelopeJson: string): Accepted;
  stats(): { workers: number; running: number; queued: number };
}

export interface ReceiverAppDeps {
  secret: string;
  intake: ReceiverIntake;
  clock: Clock;
  log: Logger;
  version: string;
}

/** The largest delivery read (an envelope is far smaller: text is at most 20,000 characters). */
export const MAX_DELIVERY_BYTES = 4 * 1024 * 1024;

const envelopeCheck = TypeCompiler.Compile(EnvelopeSchema);
const eventCheck = TypeCompiler.Compile(EventSchema);
const EVENT_KIND_SET: ReadonlySet<string> = new Set(EVENT_KINDS);
const errorResponse = (e: AppError) => Response.json(e.toEnvelope(), { status: e.status });
const accepted = () => new Response(null, { status: 204 });

function parseEnvelope(text: string): Envelope | AppError {
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    return new AppError("VALIDATION_FAILED", "The body is not JSON.", {}, { status: 400 });
  }
  if (envelopeCheck.Check(envelope)) return envelope as Envelope;
  const first = envelopeCheck.Errors(envelope).First();
  return new AppError(
    "VALIDATION_FAILED",
    "The body is not a message envelope.",
    { field: first?.path.slice(1).replaceAll("/", ".") ?? "", problem: first?.message ?? "" },
    { status: 400 },
  );
}

/** Hands a valid delivery to the intake; 204 once it is journaled (or was already), else why not. */
function enqueue(deps: ReceiverAppDeps, job: Job, text: string): Response {
  const ids = { delivery_id: job.deliveryId, channel_id: job.envelope.channel_id };
  let verdict: Accepted;
  try {
    verdict = deps.intake.accept(job, text);
  } catch (err) {
    deps.log.error({ ...ids, err: String(err) }, "delivery not journaled; answered 500 (the sender retries)");
    return errorResponse(
      new AppError("INTERNAL_ERROR", "The delivery could not be journaled; it was not accepted.", {}),
    );
  }
  if (verdict === "busy") {
    deps.log.warn(ids, "channel queue full; answered 503 (the sender retries)");
    return errorResponse(
      new AppError("RECEIVER_BUSY", "This channel's queue is full; try again later.", {
        channel_id: job.envelope.channel_id,
      }),
    );
  }
  if (verdict === "stopping")
    return errorResponse(new AppError("RECEIVER_BUSY", "The receiver is shutting down.", {}));
  if (verdict === "duplicate") deps.log.info(ids, "delivery seen before; not run again");
  return accepted();
}

/** An event delivery (`X-GW-Event: <kind>`): verified already, checked, acknowledged, never run. */
function acknowledgeEvent(deps: ReceiverAppDeps, deliveryId: string, text: string): Response {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return errorResponse(new AppError("VALIDATION_FAILED", "The body is not JSON.", {}, { status: 400 }));
  }
  if (!eventCheck.Check(event))
    return errorResponse(new AppError("VALIDATION_FAILED", "The body is not an event.", {}, { status: 400 }));
  deps.intake.acknowledge(deliveryId);
  deps.log.info(
    { delivery_id: deliveryId, kind: (event as { kind: string }).kind },
    "event delivery acknowledged; nothing to run",
  );
  return accepted();
}

export function createReceiverApp(deps: ReceiverAppDeps) {
  const startedAt = deps.clock.now();

  /**
   * In the spec's order: a size check that reads nothing (413/411, core/http-edge.ts), the raw bytes,
   * signature and headers (verify.ts: 400 or 401, before any parsing), a delivery id seen before (in memory
   * or in the journal), the envelope against the Envelope schema (400), then the intake.
   */
  const webhook = async (req: Request): Promise<Response> => {
    const receivedAt = deps.clock.now();
    const tooBig = bodySizeError(req.headers, MAX_DELIVERY_BYTES);
    if (tooBig) return errorResponse(tooBig);
    const body = new Uint8Array(await req.arrayBuffer());
    const verdict = verifyDelivery(deps.secret, req.headers, body, Math.floor(receivedAt / 1000));
    if (!verdict.ok) {
      deps.log.warn({ code: verdict.error.code, reason: verdict.error.message }, "delivery refused");
      return errorResponse(verdict.error);
    }
    const { deliveryId } = verdict;
    if (req.headers.get(EVENT_HEADER) === PING_EVENT) {
      deps.log.info({ delivery_id: deliveryId }, "signed test delivery (gw doctor) accepted; nothing to run");
      return accepted();
    }
    if (deps.intake.seen(deliveryId)) {
      deps.log.info({ delivery_id: deliveryId }, "delivery seen before; not run again");
      return accepted();
    }
    const text = new TextDecoder().decode(body);
    if (EVENT_KIND_SET.has(req.headers.get(EVENT_HEADER) ?? ""))
      return acknowledgeEvent(deps, deliveryId, text);
    const envelope = parseEnvelope(text);
    if (envelope instanceof AppError) return errorResponse(envelope);
    return enqueue(deps, { deliveryId, envelope, receivedAt }, text);
  };

  const route = async (req: Request): Promise<Response> => {
    const path = pathOf(req.url);
    if (path === "/webhook" && req.method === "POST") return webhook(req);
    if (path === "/healthz" && req.method === "GET")
      return Response.json({
        status: "ok",
        version: deps.version,
        uptime_s: Math.max(0, Math.floor((deps.clock.now() - startedAt) / 1000)),
        ...deps.intake.stats(),
      });
    return errorResponse(
      new AppError(
        "NOT_FOUND",
        `No route ${req.method} ${path}: the receiver has POST /webhook and GET /healthz.`,
      ),
    );
  };

  return {
    async fetch(req: Request): Promise<Response> {
      const res = await route(req);
      if (bodyUnread(req)) res.headers.set("connection", "close");
      return res;
    },
  };
}
