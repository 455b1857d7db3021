/**
 * Whole hostile requests for the service's routes: a method, a path (every route template with good,
 * random and broken ids, plus paths that do not exist), a query string, headers (bearer absent,
 * right, wrong or duplicated; X-Agent-ID; Idempotency-Key; Content-Type; a declared Content-Length)
 * and a body (none, arbitrary JSON, near-valid bodies from the schemas, raw text, invalid UTF-8,
 * empty, deeply nested, over the size limit). `toRequest` builds the WHATWG Request a client would send.
 */
import fc from "fast-check";
import { MAX_BODY_BYTES } from "../../../src/http/app.ts";
import {
  attachmentId,
  encodeAll,
  headerValue,
  invalidUtf8,
  messageId,
  nastyString,
  queryString,
} from "./arbitraries.ts";
import { DISCORD_CHANNEL, DM, STRANGER, TOKEN } from "./harness.ts";

export interface RequestSpec {
  method: string;
  path: string;
  query: string;
  headers: [string, string][];
  body: string | Uint8Array | null;
  /** A Content-Length header to declare (the real one, or a lie). */
  contentLength: string | null;
}

export interface RequestContext {
  ids: { allowed: string; quarantined: string; discordMessage: string };
  attachmentId?: string;
  homeDir: string;
}

export const METHODS = [
  "GET",
  "POST",
  "PUT",
  "DELETE",
  "PATCH",
  "HEAD",
  "OPTIONS",
  "PROPFIND",
  "get",
  "post",
];

/** Authorization values; only GOOD_BEARER (with any scheme case) is the right one. */
export const GOOD_BEARER = `Bearer ${TOKEN}`;
export const bearerVariants = (): string[] => [
  GOOD_BEARER,
  `bearer ${TOKEN}`,
  `Bearer ${TOKEN.toUpperCase()}`,
  `Bearer ${TOKEN.slice(0, -1)}`,
  `Bearer ${TOKEN}x`,
  `Bearer ${TOKEN.slice(0, -1)}${String.fromCharCode(TOKEN.charCodeAt(TOKEN.length - 1) ^ 1)}`,
  `Bearer  ${TOKEN}`,
  `Bearer\t${TOKEN}`,
  `Bearer ${TOKEN} ${TOKEN}`,
  `Bearer ${TOKEN},`,
  `Bearer`,
  `Bearer `,
  "",
  TOKEN,
  `Basic ${btoa(`x:${TOKEN}`)}`,
  `Token ${TOKEN}`,
  `Bearer ${"A".repeat(10_000)}`,
  `Bearer ${TOKEN}\u00a0`,
  `Bearer "${TOKEN}"`,
];

/**
 * Whether exactly this Authorization value is the right bearer. Surrounding whitespace (Unicode's, as
 * String.prototype.trim sees it, e.g. a trailing NBSP) does not count: gw trims it, which admits
 * nothing but the exact token.
 */
export function isGoodBearer(values: readonly string[]): boolean {
  if (values.length !== 1) return false;
  const v = (values[0] as string).trim();
  return /^bearer$/i.test(v.slice(0, 6)) && v.slice(6) === ` ${TOKEN}`;
}

function pathArb(ctx: RequestContext) {
  const known = [ctx.ids.allowed, ctx.ids.quarantined, ctx.ids.discordMessage];
  const idSegment = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: messageId },
    { weight: 1, arbitrary: attachmentId },
    { weight: 2, arbitrary: nastyString.map(encodeAll) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("%", "%zz", "%ff%fe", "..", "%2e%2e", "%2F", "a/b", "msg_", "", "%00"),
    },
  );
  const attSegment = ctx.attachmentId
    ? fc.oneof(fc.constant(ctx.attachmentId), attachmentId, idSegment)
    : fc.oneof(attachmentId, idSegment);
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        "/healthz",
        "/messages/unread",
        "/messages/quarantine",
        "/messages/context",
        "/messages/mark_read",
        "/messages/send",
      ),
    },
    { weight: 3, arbitrary: idSegment.map((id) => `/messages/${id}`) },
    { weight: 2, arbitrary: attSegment.map((id) => `/attachments/${id}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "/openapi.json",
        "/typing",
        "/",
        "/messages",
        "/messages/",
        "/attachments/",
        "/healthz/",
        "//healthz",
        "/messages/unread/",
        "/messages/send/",
        "/MESSAGES/UNREAD",
        "/messages/../healthz",
        "/messages/%2e%2e/healthz",
        "/webhook",
      ),
    },
    { weight: 1, arbitrary: fc.webPath() },
  );
}

function sendBodyArb(ctx: RequestContext) {
  const known = [ctx.ids.allowed, ctx.ids.quarantined, ctx.ids.discordMessage];
  const anyJson = fc.jsonValue({ maxDepth: 2 });
  const url = fc.oneof(
    fc.constant(ctx.attachmentId ? `/attachments/${ctx.attachmentId}` : "/attachments/x"),
    attachmentId.map((id) => `/attachments/${id}`),
    attachmentId.map((id) => `http://127.0.0.1:8080/attachments/${id}`),
    fc.constantFrom(
      "https://example.com/a.png",
      "javascript:alert(1)",
      "file:///etc/passwd",
      "/attachments/../gw.db",
      "",
    ),
    nastyString,
  );
  const path = fc.oneof(
    fc.constantFrom(
      `${ctx.homeDir}/ok.txt`,
      `${ctx.homeDir}/.ssh/id_ed25519`,
      `${ctx.homeDir}/data/gw.db`,
      `${ctx.homeDir}/Documents/../.ssh/id_ed25519`,
      "relative/path.txt",
      "/dev/zero",
      "/",
      "/nonexistent/file",
      `${ctx.homeDir}/ok.txt\u0000.png`,
    ),
    nastyString,
  );
  const attachment = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ url, path, mime: fc.oneof(fc.string(), anyJson) }, { requiredKeys: [] }),
    },
    { weight: 1, arbitrary: anyJson },
  );
  return fc.record(
    {
      channel_id: fc.oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom(
            DM,
            DISCORD_CHANNEL,
            STRANGER,
            "+15555550111",
            "community_chat:dm:1",
            "community_chat:",
          ),
        },
        { weight: 1, arbitrary: nastyString },
        { weight: 1, arbitrary: anyJson },
      ),
      text: fc.oneof(
        { weight: 4, arbitrary: fc.string() },
        {
          weight: 1,
          arbitrary: fc.constantFrom("", " ", "x".repeat(20_000), "x".repeat(20_001), "👍".repeat(10_001)),
        },
        { weight: 1, arbitrary: nastyString },
        { weight: 1, arbitrary: anyJson },
      ),
      reply_to: fc.oneof(fc.constantFrom(...known, null, "msg_x"), messageId, anyJson),
      attachments: fc.oneof(
        { weight: 4, arbitrary: fc.array(attachment, { maxLength: 3 }) },
        { weight: 1, arbitrary: anyJson },
      ),
      extra: anyJson,
    },
    { requiredKeys: [] },
  );
}

function markReadBodyArb(ctx: RequestContext) {
  const known = [ctx.ids.allowed, ctx.ids.quarantined, ctx.ids.discordMessage];
  return fc.oneof(
    fc.record({
      message_ids: fc.array(fc.oneof(fc.constantFrom(...known), messageId, nastyString), { maxLength: 20 }),
    }),
    fc.record(
      { message_ids: fc.jsonValue({ maxDepth: 2 }), other: fc.jsonValue({ maxDepth: 1 }) },
      { requiredKeys: [] },
    ),
    fc.constant({
      message_ids: Array.from({ length: 5_000 }, (_, i) => `msg_${String(i).padStart(26, "0")}`),
    }),
  );
}

const utf8 = (s: string) => new TextEncoder().encode(s);

function bodyArb(ctx: RequestContext): fc.Arbitrary<{ body: string | Uint8Array | null; lie: boolean }> {
  const json = (a: fc.Arbitrary<unknown>) =>
    a.map((v) => ({ body: JSON.stringify(v) ?? "null", lie: false }));
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant({ body: null, lie: false }) },
    { weight: 4, arbitrary: json(sendBodyArb(ctx)) },
    { weight: 2, arbitrary: json(markReadBodyArb(ctx)) },
    { weight: 2, arbitrary: json(fc.jsonValue()) },
    { weight: 1, arbitrary: fc.string().map((s) => ({ body: s, lie: false })) },
    { weight: 1, arbitrary: invalidUtf8.map((b) => ({ body: b, lie: false })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { body: "", lie: false },
        { body: "{", lie: false },
        { body: '{"a":', lie: false },
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100, max: 20_000 })
        .map((n) => ({ body: `${"[".repeat(n)}${"]".repeat(n)}`, lie: false })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { body: `{"channel_id":"${DM}","text":"${"x".repeat(MAX_BODY_BYTES)}"}`, lie: false },
        { body: '{"channel_id":"x","text":"y"}', lie: true },
      ),
    },
  );
}

export function requestArb(ctx: RequestContext): fc.Arbitrary<RequestSpec> {
  const auth: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    { weight: 14, arbitrary: fc.constant([GOOD_BEARER]) },
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    { weight: 2, arbitrary: fc.constantFrom(...bearerVariants()).map((v) => [v]) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...bearerVariants()), fc.constantFrom(...bearerVariants()))
        .map(([a, b]) => [a, b]),
    },
    { weight: 1, arbitrary: headerValue.map((v) => [v]) },
  );
  const agent: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    { weight: 4, arbitrary: fc.constant(["agent-a"]) },
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.constantFrom([""], ["   "], ["agent-a", "agent-b"]) },
    { weight: 1, arbitrary: headerValue.map((v) => [v]) },
  );
  const idemKey: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    { weight: 3, arbitrary: fc.constant([] as string[]) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        ["k-1"],
        ["k-2"],
        ["k-1", "k-2"],
        [""],
        ["k".repeat(255)],
        ["k".repeat(256)],
      ),
    },
    { weight: 1, arbitrary: headerValue.map((v) => [v]) },
  );
  const contentType: fc.Arbitrary<string[]> = fc.oneof<fc.MaybeWeightedArbitrary<string[]>[]>(
    { weight: 4, arbitrary: fc.constant(["application/json"]) },
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        ["text/plain"],
        ["application/x-www-form-urlencoded"],
        ["multipart/form-data; boundary=x"],
        ["application/json; charset=utf-16"],
        ["application/json", "text/plain"],
        ["application/octet-stream"],
      ),
    },
    { weight: 1, arbitrary: headerValue.map((v) => [v]) },
  );
  const extra = fc.array(
    fc.tuple(
      fc.constantFrom("x-forwarded-for", "host", "origin", "transfer-encoding", "cookie", "x-gw-signature"),
      headerValue,
    ),
    { maxLength: 2 },
  );
  return fc
    .record({
      method: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom("GET", "POST") },
        { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
      ),
      path: pathArb(ctx),
      query: fc.oneof(fc.constant(""), queryString),
      auth,
      agent,
      idemKey,
      contentType,
      extra,
      body: bodyArb(ctx),
    })
    .map((r) => {
      const method = r.method;
      const noBody = ["GET", "HEAD"].includes(method.toUpperCase());
      const body = noBody ? null : r.body.body;
      const headers: [string, string][] = [
        ...r.auth.map((v): [string, string] => ["authorization", v]),
        ...r.agent.map((v): [string, string] => ["x-agent-id", v]),
        ...r.idemKey.map((v): [string, string] => ["idempotency-key", v]),
        ...(body === null ? [] : r.contentType.map((v): [string, string] => ["content-type", v])),
        ...r.extra.filter(([k]) => k !== "transfer-encoding" || body === null),
      ];
      const length = body === null ? null : typeof body === "string" ? utf8(body).length : body.length;
      return {
        method,
        path: r.path,
        query: r.query,
        headers,
        body,
        contentLength: length === null ? null : String(r.body.lie ? length + 1_000_000_000 : length),
      };
    });
}

/** The Request for a spec (null when the fetch API itself refuses to build it). */
export function toRequest(base: string, s: RequestSpec, signal?: AbortSignal): Request | null {
  try {
    const headers = new Headers();
    for (const [k, v] of s.headers) headers.append(k, v);
    if (s.contentLength !== null) headers.set("content-length", s.contentLength);
    return new Request(`${base}${s.path}${s.query ? `?${s.query}` : ""}`, {
      method: s.method,
      headers,
      ...(s.body === null ? {} : { body: s.body }),
      ...(signal ? { signal } : {}),
    });
  } catch {
    return null;
  }
}

/** A short description of a spec, for failure reports. */
export function describe(s: RequestSpec): string {
  const body =
    s.body === null
      ? "no body"
      : typeof s.body === "string"
        ? `body ${JSON.stringify(s.body.slice(0, 200))}${s.body.length > 200 ? `… (${s.body.length} chars)` : ""}`
        : `body bytes ${Buffer.from(s.body.slice(0, 64)).toString("hex")}`;
  return `${s.method} ${s.path}${s.query ? `?${s.query}` : ""} headers ${JSON.stringify(s.headers.map(([k, v]) => [k, v.slice(0, 80)]))} ${body}`;
}
