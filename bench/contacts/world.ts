/**
 * bench/contacts/contacts.ts's address book: a Contacts folder of CARDS cards in two accounts (Sources/AAAA-ICLOUD
 * and Sources/BBBB-GOOGLE, half each, plus the empty top database), written with the demo's writer
 * (src/demo/addressbook-writer.ts). Each card has one phone number typed nationally, as `(555) 123-4567`
 * (so every one is parsed by libphonenumber), and one e-mail address in mixed case; the first card is the
 * pick-up benchmark's friend (lib/chatdb.ts FRIEND), so a timed row's sender is found in the book. How
 * long gw takes to have it ready is read back from its log (`contacts read`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { addressBookPath, type CardSpec, createAddressBook } from "../../src/demo/addressbook-writer.ts";

/** What each A/B part of contacts.ts is given: the Contacts folder (side A), its card count, the progress line. */
export interface Book {
  contactsDir: string;
  cards: number;
  progress: (s: string) => void;
}

export const CARDS = 10_000;
export const SOURCES = ["AAAA-ICLOUD", "BBBB-GOOGLE"] as const;

/** Card `i`: the friend first, then Person<i> Bench with a national (555) number no other card has. */
export function benchCard(i: number): CardSpec {
  if (i === 0)
    return { first: "Ann", last: "Friend", phones: ["(555) 555-0100"], emails: ["Ann@Example.com"] };
  return {
    first: `Person${i}`,
    last: "Bench",
    phones: [`(555) ${String(200 + (i % 300)).padStart(3, "0")}-${String(i).padStart(4, "0")}`],
    emails: [`Person${i}@Example.com`],
  };
}

/** Writes the folder at `<root>/AddressBook`; returns its path. */
export function writeContactsFolder(root: string, cards = CARDS): string {
  const dir = join(root, "AddressBook");
  createAddressBook(addressBookPath(dir)).close();
  const per = Math.ceil(cards / SOURCES.length);
  SOURCES.forEach((source, s) => {
    const w = createAddressBook(addressBookPath(dir, source));
    for (let i = s * per; i < Math.min(cards, (s + 1) * per); i++) w.addCard(benchCard(i));
    w.close();
  });
  return dir;
}

export interface ContactsRead {
  files: number;
  cards: number;
  /** The runner's own figures: the check's start to the new book swapped in; its slices, the longest. */
  ms: number;
  slices: number;
  longestSliceMs: number;
}

/** The first `contacts read` line in a gw home's log files, or null. */
export function contactsReadIn(logDir: string): ContactsRead | null {
  let names: string[] = [];
  try {
    names = readdirSync(logDir).filter((n) => n.endsWith(".log") && n !== "current.log");
  } catch {
    return null;
  }
  for (const n of names) {
    for (const line of readFileSync(join(logDir, n), "utf8").split("\n")) {
      if (!line.includes('"contacts read"')) continue;
      const r = JSON.parse(line) as ContactsRead & { longest_slice_ms: number };
      return {
        files: r.files,
        cards: r.cards,
        ms: r.ms,
        slices: r.slices,
        longestSliceMs: r.longest_slice_ms,
      };
    }
  }
  return null;
}

/** Waits (every 5 ms, at most `timeoutMs`) for the `contacts read` line. */
export async function waitContactsRead(logDir: string, timeoutMs = 30_000): Promise<ContactsRead> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const r = contactsReadIn(logDir);
    if (r) return r;
    if (performance.now() > deadline)
      throw new Error(
        `no "contacts read" in ${logDir} within ${timeoutMs / 1000} s: does gw serve start Contacts (createService)?`,
      );
    await Bun.sleep(5);
  }
}
