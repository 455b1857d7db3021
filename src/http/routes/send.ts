/**
 * POST /messages/send (spec E): bearer only. The body is validated by its schema, then the
 * idempotency runner decides between replaying a stored response and running the send service. The
 * response is built from the stored status and body text, so a replay is byte-identical to the first
 * answer, with no header that tells them apart.
 */
import { Elysia } from "elysia";
import type { IdempotentRunner, StoredResponse } from "../../send/idempotency.ts";
import type { SendMessage } from "../../send/send-message.ts";
import { errorResponses, SendHeaders, SendMessageRequest, SendMessageResponse } from "../schemas.ts";

export function jsonResponse(r: StoredResponse): Response {
  return new Response(r.body, { status: r.status, headers: { "content-type": "application/json" } });
}

export function sendRoutes(deps: { sendMessage: SendMessage; idempotency: IdempotentRunner }) {
  return new Elysia({ name: "send" }).post(
    "/messages/send",
    async ({ body, headers }) => {
      const stored = await deps.idempotency.run(headers["idempotency-key"] ?? null, body, async () => {
        const record = await deps.sendMessage(body);
        return () => ({ status: 200, body: JSON.stringify(record()) });
      });
      return jsonResponse(stored);
    },
    {
      parse: "json",
      headers: SendHeaders,
      body: SendMessageRequest,
      response: { 200: SendMessageResponse, ...errorResponses(400, 401, 404, 413, 422, 429, 502) },
      detail: {
        summary: "Send a message",
        description:
          "Routes by the `community_chat:` prefix. The channel must have been seen inbound. Send an `Idempotency-Key` " +
          "so a retried request never sends twice: a replay returns the first response unchanged.",
      },
    },
  );
}
