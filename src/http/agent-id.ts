/**
 * X-Agent-ID (spec Authentication 2): which routes need it, how they read it, and how the OpenAPI
 * document shows it. app.ts's onRequest refuses a request without it (400 AGENT_ID_REQUIRED) before any
 * route runs, so the routes read the header without validating it again (no per-request header schema),
 * and buildOpenApiDocument adds the parameter below to exactly the operations `requiresAgentId` names.
 */

/**
 * Per-agent routes: unread, single message, context, search, mark_read, events, channels. `path` is a request path as the router
 * sees it (a trailing slash routes to the same handler) or an OpenAPI template; HEAD runs GET's handler.
 */
export function requiresAgentId(method: string, path: string): boolean {
  const m = method.toUpperCase();
  const p = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  if (m === "POST") return p === "/messages/mark_read";
  if (m !== "GET" && m !== "HEAD") return false;
  return (
    p === "/events" || p === "/channels" || (/^\/messages\/[^/]+$/.test(p) && p !== "/messages/quarantine")
  );
}

/** The agent id of a request that passed onRequest's check. */
export const agentIdOf = (request: Request): string => request.headers.get("x-agent-id") ?? "";

export const AGENT_ID_PARAMETER = {
  name: "x-agent-id",
  in: "header",
  required: true,
  description: "Agent identity; keys the per-agent read state.",
  schema: { type: "string", minLength: 1 },
} as const;
