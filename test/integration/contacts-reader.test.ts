/**
 * The Contacts reader over real SQLite files written the way Contacts lays them out (the top database
 * and one per account under Sources/), by src/demo/addressbook-writer.ts: what the writer wrote is read
 * back, older schemas degrade, and a bad file or a missing folder is a problem reported, never a throw.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findAddressBooks, readAddressBook, readContactBook } from "../../src/contacts/reader.ts";
import {
  ADDRESS_BOOK_FILE,
  type AddressBookOptions,
  addressBookPath,
  type CardSpec,
  createAddressBook,
} from "../../src/demo/addressbook-writer.ts";
import { writeTenThousandCards } from "../helpers/contacts.ts";
import { tempDir } from "../helpers/temp.ts";

const US = { defaultRegion: "US" };

function folder(sources: Record<string, CardSpec[]>, opts: AddressBookOptions = {}): string {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  for (const [source, cards] of Object.entries(sources)) {
    const w = createAddressBook(addressBookPath(dir, source === "top" ? undefined : source), opts);
    for (const c of cards) w.addCard(c);
    w.close();
  }
  return dir;
}

describe("what the writer wrote, the reader reads", () => {
  test("phone numbers in national and international forms, a UK number, e-mail in mixed case", () => {
    const dir = folder({
      top: [],
      "1A2B3C4D-ICLOUD": [
        { first: "Alex", last: "Doe", phones: ["(555) 555-0100"], emails: ["Alex.Doe@Example.COM"] },
        { first: "Bea", last: "Stone", phones: ["+1 555-555-0101"] },
        { first: "Cy", phones: ["555.555.0102"] },
        { first: "Gwen", last: "Hughes", phones: [{ number: "020 7946 0018", country: "gb" }] },
      ],
    });
    const { book, files, problems } = readContactBook(dir, US);
    expect([files, problems, book.cards]).toEqual([2, [], 4]);
    expect(book.nameOf("+15555550100")).toBe("Alex Doe");
    expect(book.nameOf("alex.doe@example.com")).toBe("Alex Doe");
    expect(book.nameOf("ALEX.DOE@example.com")).toBe("Alex Doe");
    expect(book.nameOf("+15555550101")).toBe("Bea Stone");
    expect(book.nameOf("(555) 555-0102")).toBe("Cy");
    expect(book.nameOf("+442079460018")).toBe("Gwen Hughes");
    expect(book.nameOf("020 7946 0018", "GB")).toBe("Gwen Hughes");
  });

  test("a UK number written nationally is read in the default region GB", () => {
    const dir = folder({ "SRC-1": [{ first: "Gwen", phones: ["07700 900123"] }] });
    expect(readContactBook(dir, { defaultRegion: "GB" }).book.nameOf("+447700900123")).toBe("Gwen");
    expect(readContactBook(dir, US).book.nameOf("+447700900123")).toBeNull();
  });

  test("no GW_DEFAULT_REGION: the locale's region reads national numbers", () => {
    const dir = folder({ "SRC-1": [{ first: "Gwen", phones: ["020 7946 0018"] }] });
    const gb = readContactBook(dir, { defaultRegion: null, locale: "en-GB" });
    expect(gb.book.nameOf("+442079460018")).toBe("Gwen");
  });

  test("two sources holding the same person give one card; a name on two people gives two", () => {
    const dir = folder({
      "AAAA-ICLOUD": [
        { first: "Alex", last: "Doe", phones: ["+1 555 555 0100"], emails: ["alex@example.com"] },
        { first: "Sam", last: "Lee", phones: ["+15555550120"] },
      ],
      "BBBB-GOOGLE": [
        { first: "Alex", last: "Doe", phones: ["(555) 555-0100"] },
        { first: "Sam", last: "Lee", emails: ["sam.lee@example.org"] },
      ],
    });
    const { book } = readContactBook(dir, US);
    expect(book.cards).toBe(3);
    expect(book.cardsNamed("alex doe")).toEqual([
      { name: "Alex Doe", phones: ["+15555550100"], emails: ["alex@example.com"] },
    ]);
    expect(book.cardsNamed("Sam Lee").map((c) => [...c.phones, ...c.emails])).toEqual([
      ["+15555550120"],
      ["sam.lee@example.org"],
    ]);
  });

  test("linked cards in two accounts take the preferred card's name", () => {
    const dir = folder({
      "AAAA-ICLOUD": [{ first: "Alexander", last: "Doe", phones: ["+15555550100"], linkId: "LINK-1" }],
      "BBBB-GOOGLE": [{ first: "Alex", last: "Doe", linkId: "LINK-1", preferredForLinkName: true }],
    });
    const { book } = readContactBook(dir, US);
    expect([book.cards, book.nameOf("+15555550100")]).toEqual([1, "Alex Doe"]);
  });

  test("groups and the account container are not cards; a company card is named by its organisation", () => {
    const dir = join(tempDir("gw-contacts-"), "AddressBook");
    const w = createAddressBook(addressBookPath(dir, "SRC"));
    w.addGroup("Family");
    w.addCard({ first: "Pat", organization: "Pat's Plumbing", company: true, phones: ["+15555550140"] });
    w.close();
    const { book } = readContactBook(dir, US);
    expect(book.cards).toBe(1);
    expect(book.nameOf("+15555550140")).toBe("Pat's Plumbing");
    expect(book.cardsNamed("Family")).toEqual([]);
  });

  test("an edited card reads with its new name and numbers", () => {
    const dir = join(tempDir("gw-contacts-"), "AddressBook");
    const w = createAddressBook(addressBookPath(dir, "SRC"));
    const pk = w.addCard({ first: "Alex", phones: ["+15555550100"] });
    w.editCard(pk, { first: "Alexandra", last: "Doe", emails: ["ad@example.com"] });
    const gone = w.addCard({ first: "Temp", phones: ["+15555550199"] });
    w.removeCard(gone);
    w.close();
    const { book } = readContactBook(dir, US);
    expect(book.cardsNamed("Alexandra Doe")).toEqual([
      { name: "Alexandra Doe", phones: ["+15555550100"], emails: ["ad@example.com"] },
    ]);
    expect(book.nameOf("+15555550199")).toBeNull();
  });
});

describe("the files are opened read-only", () => {
  test("reading leaves every database byte for byte as it was", () => {
    const dir = folder({ top: [{ first: "Top" }], SRC: [{ first: "Alex", phones: ["+15555550100"] }] });
    const found = findAddressBooks(dir).files;
    const digest = () => found.map((f) => createHash("sha256").update(readFileSync(f)).digest("hex"));
    const before = digest();
    readContactBook(dir, US);
    readContactBook(dir, US);
    expect(digest()).toEqual(before);
  });
});

describe("other schemas degrade, never throw", () => {
  test("an older file: columns missing, contacts numbered 21", () => {
    const dir = folder(
      { SRC: [{ first: "Alex", last: "Doe", phones: ["+15555550100"], emails: ["a@example.com"] }] },
      {
        omitColumns: [
          "ZLINKID",
          "ZPREFERREDFORLINKNAME",
          "ZDISPLAYFLAGS",
          "ZCOUNTRYCODE",
          "ZISPRIMARY",
          "ZADDRESS",
        ],
        contactEntity: 21,
      },
    );
    const r = readContactBook(dir, US);
    expect(r.problems).toEqual([]);
    expect(r.book.nameOf("+15555550100")).toBe("Alex Doe");
    expect(r.book.nameOf("a@example.com")).toBe("Alex Doe");
  });

  test("no Z_PRIMARYKEY: every named row is a card, groups still are not", () => {
    const dir = join(tempDir("gw-contacts-"), "AddressBook");
    const w = createAddressBook(addressBookPath(dir, "SRC"), { noPrimaryKeyTable: true });
    w.addGroup("Family");
    w.addCard({ first: "Alex", phones: ["+15555550100"] });
    w.close();
    const r = readContactBook(dir, US);
    expect([r.problems, r.book.cards, r.book.nameOf("+15555550100")]).toEqual([[], 1, "Alex"]);
  });

  test("a SQLite file without Contacts' tables is a problem", () => {
    const dir = join(tempDir("gw-contacts-"), "AddressBook");
    const path = addressBookPath(dir);
    new Database(path, { create: true }).run("CREATE TABLE other (x)");
    const r = readAddressBook(path);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toContain("not a Contacts database");
  });
});

describe("problems are reported, never thrown", () => {
  test("no Contacts folder at all: an empty book and the problem", () => {
    const dir = join(tempDir("gw-contacts-"), "nowhere", "AddressBook");
    const r = readContactBook(dir, US);
    expect([r.files, r.book.cards, r.book.nameOf("+15555550100")]).toEqual([0, 0, null]);
    expect(r.problems).toEqual([`no Contacts folder at ${dir}`]);
  });

  test("a folder with no databases says so", () => {
    const dir = tempDir("gw-contacts-");
    mkdirSync(join(dir, "Sources", "EMPTY"), { recursive: true });
    const r = readContactBook(dir, US);
    expect(r.problems).toEqual([`no ${ADDRESS_BOOK_FILE} in ${dir} or its Sources/`]);
  });

  test("a file that is not SQLite: reported, and the other files are still read", () => {
    const dir = folder({ "AAAA-GOOD": [{ first: "Alex", phones: ["+15555550100"] }] });
    const bad = addressBookPath(dir, "BBBB-BAD");
    writeFileSync(bad, "this is not a database, just text that is long enough to have a header\n".repeat(20));
    const r = readContactBook(dir, US);
    expect(r.files).toBe(1);
    expect(r.book.nameOf("+15555550100")).toBe("Alex");
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toStartWith(`${bad}: `);
    expect(r.problems[0]).toContain("not a database");
  });

  test("an empty file and a folder where a database should be are problems too", () => {
    const dir = folder({ "AAAA-GOOD": [{ first: "Alex", phones: ["+15555550100"] }] });
    writeFileSync(addressBookPath(dir, "CCCC-EMPTY"), "");
    mkdirSync(addressBookPath(dir, "DDDD-DIR"));
    const r = readContactBook(dir, US);
    expect(r.files).toBe(1);
    expect(r.problems).toHaveLength(2);
    expect(r.book.cards).toBe(1);
  });
});

describe("scale", () => {
  test("10,000 cards across two sources are read in well under a second", () => {
    const dir = writeTenThousandCards();
    const t0 = performance.now();
    const { book, files, problems } = readContactBook(dir, US);
    const ms = performance.now() - t0;
    console.log(`10,000 cards in 2 databases read and built in ${ms.toFixed(0)} ms`);
    expect([files, problems, book.cards]).toEqual([2, [], 10_000]);
    expect(book.nameOf("person9999@example.com")).toBe("Person9999 Test");
    expect(book.nameOf("+15551999999")).toBe("Person9999 Test");
    expect(ms).toBeLessThan(2000);
  });
});
