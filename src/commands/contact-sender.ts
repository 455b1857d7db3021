/**
 * `gw allow device_messenger <name>` (extensions.md §6): a name instead of a phone number or e-mail address
 * stands for every phone number and e-mail address of the one Contacts card with that name (exact, any case).
 * None or several cards is refused with what was found, so the owner picks the handle. Reads the address
 * book of this machine (GW_CONTACTS_DIR) once, read-only.
 */
import type { Config } from "../config/settings.ts";
import type { Card } from "../contacts/book.ts";
import { readContactBook } from "../contacts/reader.ts";
import type { Source } from "../core/envelope.ts";
import { CommandError, EXIT_FAILURE } from "./exit.ts";

/** Whether an argument is a handle (a phone number, an e-mail address) rather than a name. Pure. */
export const isHandle = (id: string): boolean => id.includes("@") || /^[+\d\s().-]+$/.test(id.trim());

const describeCard = (c: Card) =>
  `${c.name} (${[...c.phones, ...c.emails].join(", ") || "no number or e-mail"})`;

/** The handles an allow argument stands for: itself, or the one card's phones and e-mails it names. */
export function senderHandles(
  config: Config,
  source: Source,
  id: string,
): { handles: string[]; card: Card | null } {
  if (source !== "device_messenger" || isHandle(id)) return { handles: [id], card: null };
  if (!config.contactsOn)
    throw new CommandError(
      `gw allow: "${id}" is not a phone number or e-mail address, and Contacts is off (GW_CONTACTS): give the handle`,
      EXIT_FAILURE,
    );
  const { book, problems } = readContactBook(config.contactsDir, { defaultRegion: config.defaultRegion });
  const cards = book.cardsNamed(id);
  if (cards.length === 1) {
    const card = cards[0] as Card;
    const handles = [...card.phones, ...card.emails];
    if (handles.length > 0) return { handles, card };
  }
  const why =
    cards.length === 0
      ? `no card in Contacts is named "${id}"${problems.length > 0 ? ` (${problems.join("; ")})` : ""}`
      : cards.length === 1
        ? `the card ${describeCard(cards[0] as Card)} has no phone number or e-mail address`
        : `"${id}" matches ${cards.length} cards: ${cards.map(describeCard).join("; ")}`;
  throw new CommandError(`gw allow: ${why}. Give the phone number or e-mail address to allow.`, EXIT_FAILURE);
}
