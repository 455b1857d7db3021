/**
 * POST /messages/react and /messages/edit as service functions (extensions.md §2). Refusals come before the
 * channel's rate-limit token, shared with sends: a message agents cannot see (404), a platform that cannot
 * (422 PLATFORM_UNSUPPORTED), then the action's own rules. Once the platform accepted, the action is
 * recorded through ingest as gw's own change: stored, never delivered. An edit's record and its platform echo
 * share one key (the connector's `changeKey`); a reaction's echo maps to nothing: one event either way.
 */
import { type ConnectorRegistry, sourceOfChannel } from "../connectors/connector.ts";
import { isReactionEmoji } from "../core/emoji.ts";
import { AppError } from "../core/errors.ts";
import type { IdFactory } from "../core/ids.ts";
import { formatTimestamp } from "../core/time.ts";
import type { NormalizedChange } from "../ingest/changes.ts";
import type { Ingest } from "../ingest/ingest.ts";
import type { MessageRow } from "../store/messages.ts";
import type { Store } from "../store/store.ts";
import type { RateLimiter } from "./rate-limit.ts";

export interface ActionDeps {
  store: Store;
  connectors: ConnectorRegistry;
  limiter: RateLimiter;
  ingest: Ingest;
  ids: IdFactory;
  now: () => number;
}

/** The message if agents can see it (allowed or outbound), else 404. */
function visibleTarget(store: Store, messageId: string): MessageRow {
  const m = store.messages.get(messageId);
  if (!m || (m.allowlist_status !== "allowed" && m.allowlist_status !== "outbound"))
    throw new AppError("MESSAGE_NOT_FOUND", "No message with this id is visible to agents.", {
      field: "message_id",
      message_id: messageId,
    });
  return m;
}

/** The target's connector and channel, when its platform can do `action` (else 422). */
function platformFor(deps: ActionDeps, m: MessageRow, action: "react" | "edit") {
  const source = sourceOfChannel(m.channel_id);
  const connector = deps.connectors[source];
  if (source === "device_messenger" || (connector && !connector[action]))
    throw new AppError(
      "PLATFORM_UNSUPPORTED",
      `${source === "device_messenger" ? "iMessage through AppleScript" : "This platform"} cannot ${action === "react" ? "react to" : "edit"} messages.`,
      { source, action },
    );
  const channel = deps.store.channels.get(m.channel_id);
  return { connector, source, channel };
}

function takeToken(deps: ActionDeps, channelId: string): void {
  const token = deps.limiter.take(channelId);
  if (!token.allowed)
    throw new AppError("RATE_LIMITED", "Too many actions in this channel; retry later.", {
      channel_id: channelId,
      retry_after_s: token.retryAfterS,
    });
}

function notRunning(source: string): AppError {
  return new AppError("PLATFORM_SEND_FAILED", `The ${source} connector is not running.`, { source });
}

/** A request the platform rules refuse (422), or a bad value in it (400). */
const refusal = (message: string, field: string, rule: string, status: 400 | 422 = 422) =>
  new AppError("VALIDATION_FAILED", message, { field, rule }, { status });

export interface ReactInput {
  message_id: string;
  emoji: string;
  remove?: boolean;
}

export interface EditInput {
  message_id: string;
  text: string;
}

export function createMessageActions(deps: ActionDeps) {
  const { store } = deps;
  /** gw's own change, stored through ingest and never delivered. */
  const record = (change: NormalizedChange) =>
    deps.ingest({
      source: change.source,
      messages: [],
      cursor: null,
      changes: [{ ...change, ownAction: true }],
    });

  /** The connector and channel of an action on `m`; refusals first, then the token. */
  const prepare = (m: MessageRow, action: "react" | "edit", check: () => void) => {
    const { connector, source, channel } = platformFor(deps, m, action);
    check();
    if (!channel)
      throw new AppError("CHANNEL_NOT_FOUND", "The message's channel was never seen inbound.", {
        channel_id: m.channel_id,
      });
    takeToken(deps, m.channel_id);
    if (!connector) throw notRunning(source);
    const to = { id: channel.id, type: channel.channel_type, platformRef: channel.platform_ref };
    return { connector, source, to, platformId: m.platform_id ?? "" };
  };

  const react = async (input: ReactInput) => {
    const m = visibleTarget(store, input.message_id);
    const remove = input.remove === true;
    const { connector, source, to, platformId } = prepare(m, "react", () => {
      if (!isReactionEmoji(input.emoji))
        throw refusal(
          "emoji must be one Unicode emoji or Discord's <:name:id> / <a:name:id>.",
          "emoji",
          "emoji",
          400,
        );
    });
    const done = await connector.react?.({
      channel: to,
      platformMessageId: platformId,
      emoji: input.emoji,
      remove,
    });
    const reactor = done?.reactor ?? { id: "", displayName: "" };
    // A repeat changed nothing on the platform, so it records nothing either.
    if (store.events.reactionStands(m.id, reactor.id, input.emoji) === remove)
      record({
        source,
        kind: "reaction",
        targetPlatformId: platformId,
        emoji: input.emoji,
        added: !remove,
        reactor,
        byOwner: false,
        timestampMs: deps.now(),
        dedupeKey: `gw:reaction:${deps.ids.event()}`,
      });
    return { message_id: m.id, emoji: input.emoji, removed: remove };
  };

  const edit = async (input: EditInput) => {
    const m = visibleTarget(store, input.message_id);
    const { connector, source, to, platformId } = prepare(m, "edit", () => {
      if (m.allowlist_status !== "outbound" || !m.platform_id)
        throw refusal("Only messages gw itself sent can be edited.", "message_id", "own_messages_only");
      const parts = (JSON.parse(m.raw) as { parts?: unknown }).parts;
      if (typeof parts === "number" && parts > 1)
        throw refusal(
          `This message was sent as ${parts} Discord messages; only a message sent as one can be edited.`,
          "message_id",
          "multi_part",
        );
      if (input.text.trim() === "")
        throw refusal(
          "text is empty: Discord cannot show an empty message.",
          "text",
          "non_blank_for_community_chat",
          400,
        );
    });
    const done = await connector.edit?.({ channel: to, platformMessageId: platformId, text: input.text });
    if (!done) throw notRunning(source);
    record({
      source,
      kind: "edit",
      targetPlatformId: platformId,
      text: input.text,
      timestampMs: done.editedAtMs,
      dedupeKey: done.changeKey,
    });
    return { message_id: m.id, edited_at: formatTimestamp(done.editedAtMs) };
  };

  return { react, edit };
}

export type MessageActions = ReturnType<typeof createMessageActions>;
