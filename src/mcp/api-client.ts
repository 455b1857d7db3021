/**
 * The one way `gw mcp` reaches the service: one HTTP request per tool call to GW_BASE_URL, with
 * `Authorization: Bearer` and `X-Agent-ID` injected and a deadline, so a stuck service cannot hang the agent.
 * Every outcome becomes a tool result (`toToolResult`); an unreachable service answers an INTERNAL_ERROR
 * envelope that names the URL. With a `sink`, a 2xx body is streamed to it (attachment bytes) instead of
 * parsed; error answers are still the service's JSON envelope, with their `Retry-After` header kept.
 */

export const REQUEST_TIMEOUT_MS = 60_000;

export interface ApiResponse {
  ok: boolean;
  status: number;
  body: unknown;
  /** The `Retry-After` header of a refusal (429, 503), when it had one. */
  retryAfter?: string;
}

/** Takes a 2xx answer's body as a stream; its result becomes the answer's body. */
export type BodySink = (body: AsyncIterable<Uint8Array>, headers: Headers) => Promise<unknown>;

export interface ApiClient {
  call(
    method: "GET" | "POST",
    path: string,
    opts?: {
      query?: Record<string, string | number | undefined>;
      body?: unknown;
      idempotencyKey?: string;
      /** Another X-Agent-ID than GW_AGENT_ID (the channel's companion id). */
      agentId?: string;
      /** Ends the request early (the caller is stopping). */
      signal?: AbortSignal;
      /** Takes a 2xx body as a stream (within the same deadline); what it returns is the answer's body. */
      sink?: BodySink;
    },
  ): Promise<ApiResponse>;
}

export function createApiClient(deps: {
  baseUrl: string;
  token: string;
  agentId: string | null;
  fetch: typeof fetch;
  timeoutMs?: number;
}): ApiClient {
  return {
    async call(method, path, opts = {}) {
      const url = new URL(path, `${deps.baseUrl}/`);
      for (const [k, v] of Object.entries(opts.query ?? {}))
        if (v !== undefined) url.searchParams.set(k, String(v));
      const headers: Record<string, string> = {
        authorization: `Bearer ${deps.token}`,
        accept: opts.sink ? "*/*" : "application/json",
      };
      const agentId = opts.agentId ?? deps.agentId;
      if (agentId) headers["x-agent-id"] = agentId;
      if (opts.body !== undefined) headers["content-type"] = "application/json";
      if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
      try {
        const res = await deps.fetch(url, {
          method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          signal: AbortSignal.any([
            AbortSignal.timeout(deps.timeoutMs ?? REQUEST_TIMEOUT_MS),
            ...(opts.signal ? [opts.signal] : []),
          ]),
        });
        if (res.ok && opts.sink && res.body) return await sinkInto(opts.sink, res, url);
        const text = await res.text();
        const retryAfter = res.headers.get("retry-after");
        return {
          ok: res.ok,
          status: res.status,
          body: parseBody(text, res.status),
          ...(retryAfter === null ? {} : { retryAfter }),
        };
      } catch (err) {
        const why = (err as Error).name === "TimeoutError" ? "did not answer in time" : "cannot be reached";
        return failure(
          `The gw service at ${deps.baseUrl} ${why}: is \`gw serve\` running and GW_BASE_URL right?`,
          url,
          err,
        );
      }
    },
  };
}

const failure = (message: string, url: URL, err: unknown): ApiResponse => ({
  ok: false,
  status: 0,
  body: {
    error: {
      code: "INTERNAL_ERROR",
      message,
      details: { url: url.toString(), reason: String((err as Error)?.message ?? err) },
    },
  },
});

async function sinkInto(sink: BodySink, res: Response, url: URL): Promise<ApiResponse> {
  try {
    return {
      ok: true,
      status: res.status,
      body: await sink(res.body as ReadableStream<Uint8Array>, res.headers),
    };
  } catch (err) {
    const late = (err as Error).name === "TimeoutError" ? " did not finish in time" : " failed";
    return failure(`The download of ${url.pathname}${late}.`, url, err);
  }
}

function parseBody(text: string, status: number): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {
      error: {
        code: "INTERNAL_ERROR",
        message: `The service answered ${status} with a body that is not JSON.`,
        details: {},
      },
    };
  }
}

export interface ToolResult {
  [key: string]: unknown;
  content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[];
  structuredContent?: Record<string, unknown>;
  data: unknown;
  isError?: boolean;
}

/**
 * Pure: the pretty-printed JSON body in `content[0].text`, the structured body in `structuredContent` and
 * `data`; a failure carries the service's error envelope verbatim with `isError: true`.
 */
export function toToolResult(r: ApiResponse): ToolResult {
  const text = JSON.stringify(r.body, null, 2);
  if (!r.ok) return { content: [{ type: "text", text }], data: r.body, isError: true };
  return {
    content: [{ type: "text", text }],
    structuredContent: r.body as Record<string, unknown>,
    data: r.body,
  };
}
