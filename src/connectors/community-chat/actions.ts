/**
 * The bot's reactions and edits on Discord (runner; extensions.md §2): one REST call each. A custom emoji
 * goes to the route as `name:id`; Discord's "Unknown Emoji" is the agent's mistake (400), other failures
 * map as a send's do. An edit answers the key its MESSAGE_UPDATE carries (Discord's `edited_timestamp` and
 * the content it answered).
 */
import { AppError } from "../../core/errors.ts";
import type { EditRequest, EditResult, ReactRequest } from "../connector.ts";
import { editKey } from "./changes.ts";
import { isTokenRejection, sendFailure } from "./platform-errors.ts";
import { connectedLink, type SenderDeps } from "./sender.ts";

const UNKNOWN_EMOJI = 10014;

/** The emoji as Discord's reaction route names it: Unicode as is, `<a:name:id>` as `name:id`. */
export function routeEmoji(emoji: string): string {
  const custom = /^<a?:(\w+):(\d+)>$/.exec(emoji);
  return custom ? `${custom[1]}:${custom[2]}` : emoji;
}

function actionFailure(deps: SenderDeps, err: unknown, field: string): AppError {
  if (isTokenRejection(err)) deps.onTokenRejected();
  const code = (err as { code?: unknown } | null)?.code;
  if (code === UNKNOWN_EMOJI)
    return new AppError(
      "VALIDATION_FAILED",
      "Discord does not know this emoji (a custom one must belong to a server the bot is in).",
      { field, rule: "unknown_emoji" },
      { status: 400, cause: err },
    );
  return sendFailure(err);
}

export function createActions(deps: SenderDeps & { now: () => number }) {
  return {
    react: async (req: ReactRequest): Promise<{ reactor: { id: string; displayName: string } }> => {
      const link = connectedLink(deps);
      try {
        await link.react(req.channel.platformRef, req.platformMessageId, routeEmoji(req.emoji), req.remove);
      } catch (err) {
        throw actionFailure(deps, err, "emoji");
      }
      const bot = link.botUser();
      return { reactor: { id: bot?.id ?? "", displayName: bot?.name ?? "" } };
    },
    edit: async (req: EditRequest): Promise<EditResult> => {
      const link = connectedLink(deps);
      let answer: { edited_timestamp?: unknown; content?: unknown };
      try {
        answer = await link.edit(req.channel.platformRef, req.platformMessageId, req.text);
      } catch (err) {
        throw actionFailure(deps, err, "text");
      }
      const stamp = typeof answer.edited_timestamp === "string" ? answer.edited_timestamp : "";
      const at = Date.parse(stamp);
      const editedAtMs = Number.isFinite(at) ? at : deps.now();
      const content = typeof answer.content === "string" ? answer.content : req.text;
      return { editedAtMs, changeKey: editKey(req.platformMessageId, stamp || String(editedAtMs), content) };
    },
  };
}
