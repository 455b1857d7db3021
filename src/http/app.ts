/**
 * createApp(deps) builds the HTTP API without listening, so tests drive it with
 * `app.handle(new Request(...))` and `gw serve` adds `listen()`. Order on every request: the global
 * error mapper (registered first, so it covers every route), then the bearer check in `onRequest`
 * (before body parsing and validation, so a request without a token always gets 401), then routes.
 */
import { Elysia } from "elysia";
import { AppError, toAppError } from "../core/errors.ts";
import type { Logger } from "../core/ports.ts";
import { createBearerCheck } from "./auth.ts";
import { buildHealth, type HealthSources } from "./health.ts";

export interface AppDeps {
  bearerToken: string;
  health: HealthSources;
  log: Logger;
}

/** Routes that answer without a bearer (decisions.md: operators call /healthz bare). */
const OPEN_ROUTES = new Set(["GET /healthz"]);

export function createApp(deps: AppDeps) {
  const authorized = createBearerCheck(deps.bearerToken);
  return new Elysia()
    .onError(({ code, error, set }) => {
      const appError =
        code === "NOT_FOUND" ? new AppError("NOT_FOUND", "No such route.", {}) : toAppError(error);
      if (appError.code === "INTERNAL_ERROR")
        deps.log.error({ err: appError.cause ?? error }, "unhandled error");
      set.status = appError.status;
      return appError.toEnvelope();
    })
    .onRequest(({ request }) => {
      const path = new URL(request.url).pathname;
      if (OPEN_ROUTES.has(`${request.method} ${path}`)) return;
      if (!authorized(request.headers.get("authorization"))) {
        throw new AppError("UNAUTHORIZED", "Missing or invalid bearer token.", {});
      }
    })
    .get("/healthz", () => buildHealth(deps.health));
}

export type App = ReturnType<typeof createApp>;
