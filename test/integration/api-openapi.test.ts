/** GET /openapi.json (OpenAPI 3.1, checked by an independent validator), /docs and /redoc (offline). */
import { describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { AUTH, testService } from "../helpers/service.ts";

const t = await testService();
const doc = (await (await t.request("GET", "/openapi.json", { headers: AUTH })).json()) as {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { security?: unknown[]; responses: Record<string, unknown>; parameters?: { name: string }[] }
    >
  >;
  components: { securitySchemes: Record<string, unknown> };
  security: unknown[];
};

describe("/openapi.json", () => {
  test("is a valid OpenAPI 3.1 document", async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const result = await new Validator().validate(doc as never);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  test("documents every route with its method", () => {
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops.sort()).toEqual(
      [
        "GET /healthz",
        "GET /messages/unread",
        "GET /messages/{message_id}",
        "GET /messages/context",
        "POST /messages/mark_read",
        "POST /messages/send",
        "GET /messages/quarantine",
        "GET /attachments/{attachment_id}",
        "GET /events",
        "POST /messages/react",
        "POST /messages/edit",
        "GET /channels",
        "GET /messages/search",
      ].sort(),
    );
  });

  test("declares the bearer scheme globally and opens only /healthz", () => {
    expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/healthz"]?.get?.security).toEqual([]);
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (path !== "/healthz") for (const op of Object.values(methods)) expect(op.security).toBeUndefined();
    }
  });

  test.each([
    ["/messages/unread", "get", ["200", "400", "401", "503"]],
    ["/events", "get", ["200", "400", "401", "503"]],
    ["/messages/quarantine", "get", ["200", "400", "401"]],
    ["/messages/context", "get", ["200", "400", "401", "404", "422"]],
    ["/messages/mark_read", "post", ["200", "400", "401", "422"]],
    ["/messages/{message_id}", "get", ["200", "400", "401", "404", "422"]],
    ["/messages/send", "post", ["200", "400", "401", "404", "413", "422", "429", "502"]],
    ["/attachments/{attachment_id}", "get", ["401", "404", "422"]],
    ["/messages/react", "post", ["200", "400", "401", "404", "422", "429", "502"]],
    ["/messages/edit", "post", ["200", "400", "401", "404", "422", "429", "502"]],
    ["/channels", "get", ["200", "400", "401"]],
    ["/messages/search", "get", ["200", "400", "401"]],
  ])("%s documents its responses", (path, method, statuses) => {
    expect(Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort()).toEqual(statuses.sort());
  });

  test("per-agent routes document X-Agent-ID; send documents Idempotency-Key", () => {
    for (const [path, method] of [
      ["/messages/unread", "get"],
      ["/messages/context", "get"],
      ["/messages/mark_read", "post"],
      ["/messages/{message_id}", "get"],
      ["/channels", "get"],
      ["/messages/search", "get"],
    ] as const) {
      expect(doc.paths[path]?.[method]?.parameters?.map((p) => p.name)).toContain("x-agent-id");
    }
    expect(doc.paths["/messages/send"]?.post?.parameters?.map((p) => p.name)).toContain("idempotency-key");
  });
});

describe("viewers", () => {
  test.each([
    ["/docs", "SwaggerUIBundle"],
    ["/redoc", "Redoc.init"],
  ])(
    "%s is one self-contained page with the document inlined and nothing fetched from the internet",
    async (path, marker) => {
      const res = await t.request("GET", path, { headers: AUTH });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const html = await res.text();
      expect(html).toContain(marker);
      expect(html).toContain('"openapi":"3.1.0"');
      expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/i);
    },
  );
});
