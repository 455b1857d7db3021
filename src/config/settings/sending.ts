/**
 * Settings of attachments kept and sent, per-channel rate limits, idempotency. Rows of the settings table
 * (settings.ts), in the order the README and `gw --help` list them.
 */
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

export const SENDING_SETTINGS = {
  attachmentRetentionDays: setting({
    env: "GW_ATTACHMENT_RETENTION_DAYS",
    faces: ["serve"],
    doc: "Days after which stored attachment bytes are deleted (the record stays). Decimals allowed.",
    defaultText: "`30`",
    fallback: value(30),
    parse: p.positiveNumber,
  }),
  attachmentMaxBytes: setting({
    env: "GW_ATTACHMENT_MAX_BYTES",
    faces: ["serve"],
    doc: "Larger inbound attachments are not re-hosted (warning; the envelope is delivered without them).",
    defaultText: "`104857600`",
    fallback: value(104_857_600),
    parse: p.integer(0),
  }),
  rateLimitPerChannelRps: setting({
    env: "GW_RATE_LIMIT_PER_CHANNEL_RPS",
    faces: ["serve"],
    doc: "Send-rate token refill per channel, per second (decimals allowed).",
    defaultText: "`1`",
    fallback: value(1),
    parse: p.positiveNumber,
  }),
  rateLimitBurst: setting({
    env: "GW_RATE_LIMIT_BURST",
    faces: ["serve"],
    doc: "Send-rate bucket capacity per channel.",
    defaultText: "`5`",
    fallback: value(5),
    parse: p.integer(1),
  }),
  idempotencyTtlHours: setting({
    env: "GW_IDEMPOTENCY_TTL_HOURS",
    faces: ["serve"],
    doc: "How long an `Idempotency-Key` is remembered.",
    defaultText: "`24`",
    fallback: value(24),
    parse: p.positiveNumber,
  }),
  sendPathRoots: setting<string[] | null>({
    env: "GW_SEND_PATH_ROOTS",
    faces: ["serve"],
    doc: "If set (`:`-separated absolute dirs), `path` attachments must resolve inside one of them.",
    defaultText: "unset",
    fallback: none,
    parse: p.absoluteDirList,
  }),
};
