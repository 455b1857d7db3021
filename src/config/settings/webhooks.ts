/**
 * Settings of signed webhooks: where they go, their secret, retries, timeout and what they push. Rows of the
 * settings table (settings.ts), in the order the README and `gw --help` list them.
 */
import { EVENT_KINDS } from "../../core/event.ts";
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

/** What a webhook can push: the message (the spec's delivery), or one of the event kinds. */
export const WEBHOOK_KINDS = ["message", ...EVENT_KINDS] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export const WEBHOOK_SETTINGS = {
  webhookUrl: setting<string | null>({
    env: "GW_WEBHOOK_URL",
    faces: ["serve"],
    doc: "Target of signed webhooks for allowlisted inbound messages. Unset = no webhooks.",
    defaultText: "unset",
    fallback: none,
    parse: p.httpUrl,
  }),
  webhookSecret: setting<string | null>({
    env: "GW_WEBHOOK_SECRET",
    faces: ["serve", "receiver"],
    doc: "HMAC-SHA256 secret shared by service and receiver. Required with GW_WEBHOOK_URL and for the receiver.",
    defaultText: "unset",
    fallback: none,
    parse: p.text,
    secret: true,
  }),
  webhookRetryDelaysMs: setting({
    env: "GW_WEBHOOK_RETRY_DELAYS_MS",
    faces: ["serve"],
    doc: "The 4 waits between the 5 webhook attempts, each with ±20 % jitter.",
    defaultText: "`5000,30000,120000,600000`",
    fallback: value([5000, 30000, 120000, 600000]),
    parse: p.integerList(4, 0),
  }),
  webhookTimeoutMs: setting({
    env: "GW_WEBHOOK_TIMEOUT_MS",
    faces: ["serve"],
    doc: "Per-attempt webhook timeout; a timeout counts as a connection failure.",
    defaultText: "`15000`",
    fallback: value(15000),
    parse: p.integer(1),
  }),
  webhookEvents: setting({
    env: "GW_WEBHOOK_EVENTS",
    faces: ["serve"],
    doc: "What webhooks push: `message` (the spec's delivery) and event kinds (`message.edited`, `message.deleted`, `reaction.added`, `reaction.removed`), comma-separated, or `all`. With any event kind every delivery carries `X-GW-Event`.",
    defaultText: "`message`",
    fallback: value(["message"] as WebhookKind[]),
    parse: p.listOf(WEBHOOK_KINDS),
  }),
};
