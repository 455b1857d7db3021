/**
 * Every setting gw reads: the spec's table plus decisions.md, one row each (settings/row.ts), kept by
 * subject in settings/: the service itself, webhooks, Discord, iMessage and Contacts, sending, agents,
 * the receiver, the login service. Their order here is the README's and `gw --help`'s. Config (the parsed
 * result) is derived from this table, so adding a row adds a typed field.
 */
import { AGENT_SETTINGS } from "./settings/agents.ts";
import { CORE_SETTINGS } from "./settings/core.ts";
import { DISCORD_SETTINGS } from "./settings/discord.ts";
import { IMESSAGE_SETTINGS } from "./settings/imessage.ts";
import { LOGIN_SERVICE_SETTINGS } from "./settings/login-service.ts";
import { RECEIVER_SETTINGS } from "./settings/receiver.ts";
import type { Setting } from "./settings/row.ts";
import { SENDING_SETTINGS } from "./settings/sending.ts";
import { WEBHOOK_SETTINGS } from "./settings/webhooks.ts";

export const SETTINGS = {
  ...CORE_SETTINGS,
  ...WEBHOOK_SETTINGS,
  ...DISCORD_SETTINGS,
  ...IMESSAGE_SETTINGS,
  ...SENDING_SETTINGS,
  ...AGENT_SETTINGS,
  ...RECEIVER_SETTINGS,
  ...LOGIN_SERVICE_SETTINGS,
};

export type SettingKey = keyof typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type Config = { readonly [K in SettingKey]: ValueOf<(typeof SETTINGS)[K]> } & {
  /** Whether gw reads chat.db: on macOS, or anywhere GW_CHAT_DB_PATH is set (tests, the demo). */
  readonly deviceMessengerOn: boolean;
  /** Whether gw reads Contacts: GW_CONTACTS when set, else on macOS or wherever GW_CONTACTS_DIR is set. */
  readonly contactsOn: boolean;
};
