/**
 * Settings of the iMessage connector (device_messenger) and the Contacts names it shows: chat.db, polling,
 * trusted services, AppleScript, the Contacts folder. Rows of the settings table (settings.ts), in the order
 * the README and `gw --help` list them.
 */
import { join } from "node:path";
import type { DeviceService } from "../../allowlist/services.ts";
import * as p from "../parsers.ts";
import { none, setting, value } from "./row.ts";

export const IMESSAGE_SETTINGS = {
  chatDbPath: setting({
    env: "GW_CHAT_DB_PATH",
    faces: ["serve"],
    doc: "macOS Messages database, opened read-only.",
    defaultText: "`~/Library/Messages/chat.db`",
    fallback: (_d, h) => join(h.homeDir, "Library/Messages/chat.db"),
    parse: p.path,
  }),
  devicePollIntervalMs: setting({
    env: "GW_DEVICE_POLL_INTERVAL_MS",
    faces: ["serve"],
    doc: "Fallback chat.db poll period; file-change notifications make pick-up faster.",
    defaultText: "`1000`",
    fallback: value(1000),
    parse: p.integer(10),
  }),
  deviceBackfillFenceMinutes: setting({
    env: "GW_DEVICE_BACKFILL_FENCE_MINUTES",
    faces: ["serve"],
    doc: "A new chat.db row dated this much before the newest date already read is iCloud backfill: not delivered (0 turns the fence off).",
    defaultText: "`15`",
    fallback: value(15),
    parse: p.integer(0),
  }),
  deviceAttachmentWaitMs: setting({
    env: "GW_DEVICE_ATTACHMENT_WAIT_MS",
    faces: ["serve"],
    doc: "How long an iMessage waits for attachments still downloading before it is delivered without them.",
    defaultText: "`60000`",
    fallback: value(60_000),
    parse: p.integer(0),
  }),
  deviceTrustedServices: setting({
    env: "GW_DEVICE_TRUSTED_SERVICES",
    faces: ["serve"],
    doc: 'Messages services an allowlist entry without `services` trusts: `iMessage`, `SMS`, `RCS`, comma-separated. SMS sender ids can be forged, so a message over another service is quarantined (see "Who can reach your agents").',
    defaultText: "`iMessage`",
    fallback: value(["iMessage"] as DeviceService[]),
    parse: p.services,
  }),
  osascriptPath: setting({
    env: "GW_OSASCRIPT_PATH",
    faces: ["serve"],
    doc: "Program that runs AppleScript for iMessage sends.",
    defaultText: "`/usr/bin/osascript`",
    fallback: value("/usr/bin/osascript"),
    parse: p.path,
  }),
  contacts: setting<boolean | null>({
    env: "GW_CONTACTS",
    faces: ["serve"],
    doc: "1: read the Contacts databases to name Messages senders and conversations (extensions §6); 0: no Contacts names.",
    defaultText: "`1` on macOS or with GW_CONTACTS_DIR, else `0`",
    fallback: none,
    parse: p.flag,
  }),
  contactsDir: setting({
    env: "GW_CONTACTS_DIR",
    faces: ["serve"],
    doc: "Folder of the Contacts databases (`AddressBook-v22.abcddb` and `Sources/*/`), opened read-only; set, it turns Contacts on off macOS too (tests, the demo).",
    defaultText: "`~/Library/Application Support/AddressBook`",
    fallback: (_d, h) => join(h.homeDir, "Library/Application Support/AddressBook"),
    parse: p.path,
  }),
  defaultRegion: setting<string | null>({
    env: "GW_DEFAULT_REGION",
    faces: ["serve"],
    doc: "Region (ISO 3166 alpha-2: `US`, `GB`, …) of phone numbers written without a country code, in Contacts and in handles without a country.",
    defaultText: "the system locale's region",
    fallback: none,
    parse: p.region,
  }),
};
