/**
 * The API's documentation without a running service (`gw docs`): the app is built with an in-memory
 * store and inert ports only so that its route schemas can be read; no request is ever handled. The
 * pages are the same self-contained Swagger UI and ReDoc pages `gw serve` serves at /docs and /redoc.
 */
import { createArrivals } from "../ingest/arrivals.ts";
import { createIdempotentRunner } from "../send/idempotency.ts";
import type { SendMessage } from "../send/send-message.ts";
import { openStore } from "../store/store.ts";
import { createApp } from "./app.ts";
import { buildOpenApiDocument, redocPage, swaggerPage } from "./docs-render.ts";

const inert = () => {
  throw new Error("the offline documentation app handles no request");
};

export async function offlineDocsPage(version: string, viewer: "swagger" | "redoc"): Promise<string> {
  const store = openStore(":memory:");
  try {
    const clock = { now: () => 0 };
    const log = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
    const app = createApp({
      bearerToken: "offline-docs",
      version,
      health: { version, startedAtMs: 0, now: clock.now, connectors: inert, webhookCounts: inert },
      store,
      clock,
      publicBaseUrl: "http://127.0.0.1:8080",
      attachmentDir: "/nonexistent",
      sendMessage: inert as unknown as SendMessage,
      actions: { react: inert, edit: inert },
      allowlist: inert,
      idempotency: createIdempotentRunner({ store: store.idempotency, clock, ttlMs: 0, scope: "docs", log }),
      arrivals: createArrivals({ maxWaiters: 0 }),
      eventArrivals: createArrivals({ maxWaiters: 0 }),
      log,
    });
    const doc = buildOpenApiDocument(app, version);
    return (await (viewer === "redoc" ? redocPage(doc) : swaggerPage(doc))).text();
  } finally {
    store.close();
  }
}
