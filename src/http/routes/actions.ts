/**
 * POST /messages/react and POST /messages/edit (extensions.md §2): bearer only; the body is validated by its
 * schema, then the action service decides (send/message-actions.ts). Neither takes an Idempotency-Key:
 * repeating a reaction changes nothing, repeating an edit sets the same text.
 */
import { Elysia } from "elysia";
import type { MessageActions } from "../../send/message-actions.ts";
import { EditRequest, EditResponse, errorResponses, ReactRequest, ReactResponse } from "../schemas.ts";

export function actionRoutes(deps: { actions: MessageActions }) {
  return new Elysia({ name: "actions" })
    .post("/messages/react", ({ body }) => deps.actions.react(body), {
      parse: "json",
      body: ReactRequest,
      response: { 200: ReactResponse, ...errorResponses(400, 401, 404, 422, 429, 502) },
      detail: {
        summary: "React to a message",
        description:
          "Adds (or with `remove`, takes back) gw's own reaction on a visible message. Discord only: iMessage " +
          "answers 422 PLATFORM_UNSUPPORTED. Takes a rate-limit token of the channel, like a send. A repeat is a no-op.",
      },
    })
    .post("/messages/edit", ({ body }) => deps.actions.edit(body), {
      parse: "json",
      body: EditRequest,
      response: { 200: EditResponse, ...errorResponses(400, 401, 404, 422, 429, 502) },
      detail: {
        summary: "Edit a message gw sent",
        description:
          "Discord only, and only gw's own messages sent as one part (422 `own_messages_only` / `multi_part`); " +
          "iMessage answers 422 PLATFORM_UNSUPPORTED. The stored text changes; agents get no event for it.",
      },
    });
}
