/**
 * `gw doctor`'s Contacts line (runner): whether the Contacts databases can be read and how many cards
 * they hold. Never a fail: without Contacts gw shows handles instead of names and works on. Nothing when
 * Contacts is off (GW_CONTACTS=0, or off macOS without GW_CONTACTS_DIR).
 */
import type { Config } from "../config/settings.ts";
import { readContactBook } from "../contacts/reader.ts";
import { type Check, ok, warn } from "./check.ts";

const WHY = "senders and conversations show phone numbers and e-mail addresses instead of names";
const FIX =
  "System Settings → Privacy & Security → Contacts and Full Disk Access: allow the program that starts gw (your terminal, or the gw binary when it runs as a login service), then restart it; or point GW_CONTACTS_DIR at the folder, or set GW_CONTACTS=0";

export function contactsChecks(
  config: Pick<Config, "contactsOn" | "contactsDir" | "defaultRegion">,
): Check[] {
  if (!config.contactsOn) return [];
  const dir = config.contactsDir;
  const { book, files, problems } = readContactBook(dir, { defaultRegion: config.defaultRegion });
  const cards = `${book.cards} card${book.cards === 1 ? "" : "s"}`;
  const dbs = `${files} database${files === 1 ? "" : "s"}`;
  if (files === 0) return [warn("contacts", `Contacts cannot be read: ${problems.join("; ")}`, WHY, FIX)];
  if (problems.length > 0)
    return [
      warn(
        "contacts",
        `Contacts read in part at ${dir} (${cards} in ${dbs}); cannot read ${problems.join("; ")}`,
        "the cards in those files get no names",
        FIX,
      ),
    ];
  return [ok("contacts", `Contacts readable at ${dir}: ${cards} in ${dbs}`)];
}
