/**
 * The large address book the Contacts reader and runner tests share: 10,000 cards in two accounts
 * (AAAA-ICLOUD holds 0-4999, BBBB-GOOGLE 5000-9999) written by src/demo/addressbook-writer.ts. Card i is
 * "Person<i> Test" with one national phone number, (555) <100 + i mod 900>-<i, four digits>, and the
 * e-mail address Person<i>@Example.com.
 */
import { join } from "node:path";
import { addressBookPath, createAddressBook } from "../../src/demo/addressbook-writer.ts";
import { tempDir } from "./temp.ts";

/** Writes the 10,000 cards into a new AddressBook folder and returns its path. */
export function writeTenThousandCards(): string {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  for (const [source, offset] of [
    ["AAAA-ICLOUD", 0],
    ["BBBB-GOOGLE", 5000],
  ] as const) {
    const w = createAddressBook(addressBookPath(dir, source));
    for (let i = offset; i < offset + 5000; i++)
      w.addCard({
        first: `Person${i}`,
        last: "Test",
        phones: [`(555) ${String(100 + (i % 900)).padStart(3, "0")}-${String(i).padStart(4, "0")}`],
        emails: [`Person${i}@Example.com`],
      });
    w.close();
  }
  return dir;
}
