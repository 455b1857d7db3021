/**
 * The OpenAPI 3.1 document and its two viewers, rendered (pure, given the finished app). The
 * document is generated from the app's own route schemas (@elysiajs/openapi's toOpenAPISchema) plus the
 * bearer scheme. /docs (Swagger UI) and /redoc (ReDoc) are single self-contained pages: the viewer's
 * script and the document are inlined, so they work offline and need no second authorised request.
 * The viewers' files are read when a page is made (viewer-files.ts: compressed in the binary; imported as
 * text they were in it twice, as source and as its bytecode). Loaded on first use only (it is heavy:
 * ~0.3 s to import).
 */
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { AGENT_ID_PARAMETER, requiresAgentId } from "./agent-id.ts";
import { viewerText } from "./viewer-files.ts";

export const OPENAPI_VERSION = "3.1.0";
const OPEN_ROUTES = new Set(["/healthz"]);

export function buildOpenApiDocument(app: AnyElysia, version: string): Record<string, unknown> {
  const { paths, components } = toOpenAPISchema(
    app,
    { paths: ["/openapi.json", "/docs", "/redoc"] },
    undefined,
    undefined,
    OPENAPI_VERSION,
  );
  const operations = paths as Record<
    string,
    Record<string, { security?: unknown[]; parameters?: unknown[] }>
  >;
  for (const [path, methods] of Object.entries(operations)) {
    for (const [method, op] of Object.entries(methods)) {
      if (OPEN_ROUTES.has(path)) op.security = [];
      if (requiresAgentId(method, path)) op.parameters = [...(op.parameters ?? []), AGENT_ID_PARAMETER];
    }
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "gw agent API",
      version,
      description:
        "Local gateway between messaging platforms and agents. Every route but /healthz needs `Authorization: Bearer <GW_BEARER_TOKEN>`; " +
        "per-agent routes also need `X-Agent-ID`. Every error is `{error: {code, message, details}}`.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths,
    components: { ...components, securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
  };
}

/** JSON safe to inline in a <script> element. */
function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

const inlineScript = (js: string) => js.replace(/<\/script/gi, "<\\/script");

export function page(title: string, head: string, body: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>${head}</head><body>${body}</body></html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}

export const swaggerPage = async (doc: unknown): Promise<Response> =>
  page(
    "gw API",
    `<style>${await viewerText("swaggerCss")}</style>`,
    `<div id="ui"></div><script>${inlineScript(await viewerText("swaggerJs"))}</script><script>window.ui = SwaggerUIBundle({ spec: ${inlineJson(doc)}, dom_id: "#ui" });</script>`,
  );

export const redocPage = async (doc: unknown): Promise<Response> =>
  page(
    "gw API",
    "",
    `<div id="redoc"></div><script>${inlineScript(await viewerText("redocJs"))}</script><script>Redoc.init(${inlineJson(doc)}, {}, document.getElementById("redoc"));</script>`,
  );
