/**
 * createApp(deps) builds the HTTP API without listening, so tests drive it with
 * `app.handle(new Request(...))` and `gw serve` adds `listen()`. Order on every request: the global
 * error mapper (registered first, so it covers every route), then in `onRequest` — before any body is
 * parsed or validated — the bearer check (401), on per-agent routes the X-Agent-ID check (400), and the
 * body size (413/411, core/http-edge.ts), then the route's schema validation, then the handler. No CORS headers are ever sent.
 */
import { type AnyElysia, Elysia } from "elysia";
import type { Allowlist } from "../allowlist/parse.ts";
import { AppError } from "../core/errors.ts";
import { bodySizeError, bodyUnread, bunServeOptions, pathOf } from "../core/http-edge.ts";
import { type Names, NO_NAMES } from "../core/names.ts";
import type { Clock, Logger } from "../core/ports.ts";
import type { Arrivals } from "../ingest/arrivals.ts";
import type { IdempotentRunner } from "../send/idempotency.ts";
import type { MessageActions } from "../send/message-actions.ts";
import type { SendMessage } from "../send/send-message.ts";
import type { Store } from "../store/store.ts";
import { requiresAgentId } from "./agent-id.ts";
import { createBearerCheck } from "./auth.ts";
import { docsRoutes } from "./docs.ts";
import { retryAfterHeader, toHttpError } from "./errors.ts";
import { buildHealth, HealthSchema, type HealthSources } from "./health.ts";
import { actionRoutes } from "./routes/actions.ts";
import { attachmentRoutes } from "./routes/attachments.ts";
import { channelRoutes } from "./routes/channels.ts";
import { eventRoutes } from "./routes/events.ts";
import { messageRoutes } from "./routes/messages.ts";
import { searchRoutes } from "./routes/search.ts";
import { sendRoutes } from "./routes/send.ts";
import { LONG_POLL_MAX_SECONDS } from "./schemas.ts";

export interface AppDeps {
  bearerToken: string;
  version: string;
  health: HealthSources;
  store: Store;
  clock: Clock;
  /** Base of adapter-hosted attachment URLs, e.g. http://127.0.0.1:8080. */
  publicBaseUrl: string;
  attachmentDir: string;
  sendMessage: SendMessage;
  idempotency: IdempotentRunner;
  /** POST /messages/react and /messages/edit. */
  actions: MessageActions;
  /** The live allowlist (channel names of people without a platform name). */
  allowlist: () => Allowlist;
  /** Contacts names (channel names of iMessage people the allowlist does not name); none by default. */
  names?: Names;
  /** Announces stored allowlisted messages to unread long polls. */
  arrivals: Arrivals;
  /** Announces stored visible events to GET /events long polls. */
  eventArrivals: Arrivals;
  log: Logger;
}

/** Largest request body accepted (a send is at most 20,000 characters of text plus a few attachment refs). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Seconds a connection may stay silent before Bun closes it: longer than the longest unread long poll
 * (Bun's default, 10 s, would cut a held request).
 */
export const IDLE_TIMEOUT_S = LONG_POLL_MAX_SECONDS + 15;

/** Routes that answer without a bearer (decisions.md: operators call /healthz bare). */
const OPEN_ROUTES = new Set(["GET /healthz"]);

export function createApp(deps: AppDeps) {
  const authorized = createBearerCheck(deps.bearerToken);
  let root: AnyElysia | null = null;
  // normalize: false keeps validation strict (by default Elysia turns `"x"` into `[{}]` for an array of objects).
  const app = new Elysia({
    normalize: false,
    serve: { ...bunServeOptions(deps.log), idleTimeout: IDLE_TIMEOUT_S },
  })
    .onError(({ code, error, set, request, route }) => {
      const appError = toHttpError(code, error, request.method, route || pathOf(request.url));
      if (appError.code === "INTERNAL_ERROR")
        deps.log.error({ err: appError.cause ?? error }, "unhandled error");
      const retryAfter = retryAfterHeader(appError);
      if (retryAfter !== null) set.headers["retry-after"] = retryAfter;
      if (bodyUnread(request)) set.headers.connection = "close";
      set.status = appError.status;
      return appError.toEnvelope();
    })
    .onRequest(({ request }) => {
      const path = pathOf(request.url);
      if (OPEN_ROUTES.has(`${request.method} ${path}`)) return;
      if (!authorized(request.headers.get("authorization"))) {
        throw new AppError("UNAUTHORIZED", "Missing or invalid bearer token.", {});
      }
      if (requiresAgentId(request.method, path) && !request.headers.get("x-agent-id")?.trim()) {
        throw new AppError("AGENT_ID_REQUIRED", "This route needs an X-Agent-ID header naming the agent.", {
          field: "X-Agent-ID",
        });
      }
      const tooBig = bodySizeError(request.headers, MAX_BODY_BYTES);
      if (tooBig) throw tooBig;
    })
    .get("/healthz", () => buildHealth(deps.health), {
      response: { 200: HealthSchema },
      detail: {
        summary: "Liveness and connector states",
        description: "No bearer needed; states and counts only.",
      },
    })
    .use(
      messageRoutes({
        store: deps.store,
        clock: deps.clock,
        publicBaseUrl: deps.publicBaseUrl,
        arrivals: deps.arrivals,
      }),
    )
    .use(searchRoutes({ store: deps.store, publicBaseUrl: deps.publicBaseUrl }))
    .use(eventRoutes({ events: deps.store.events, clock: deps.clock, eventArrivals: deps.eventArrivals }))
    .use(sendRoutes({ sendMessage: deps.sendMessage, idempotency: deps.idempotency }))
    .use(actionRoutes({ actions: deps.actions }))
    .use(
      channelRoutes({
        channelList: deps.store.channelList,
        allowlist: deps.allowlist,
        names: deps.names ?? NO_NAMES,
      }),
    )
    .use(attachmentRoutes({ attachments: deps.store.attachments, dir: deps.attachmentDir }))
    .use(docsRoutes(() => root as AnyElysia, deps.version));
  root = app;
  return app;
}

export type App = ReturnType<typeof createApp>;
