/** The contact book builder (src/contacts/book.ts): names, merging, conflicts, lookups. */
import { describe, expect, test } from "bun:test";
import {
  buildContactBook,
  type CardRow,
  cardName,
  EMPTY_BOOK,
  foldName,
  tallyName,
} from "../../src/contacts/book.ts";

type RowInput = Partial<Omit<CardRow, "phones">> & { phones?: (string | CardRow["phones"][number])[] };

function row(r: RowInput): CardRow {
  return {
    firstName: null,
    lastName: null,
    nickname: null,
    organization: null,
    company: false,
    linkId: null,
    preferredForLinkName: false,
    emails: [],
    ...r,
    phones: (r.phones ?? []).map((p) => (typeof p === "string" ? { number: p, country: null } : p)),
  };
}
const US = { defaultRegion: "US" };

describe("cardName", () => {
  test.each([
    [{ firstName: "Alex", lastName: "Doe" }, "Alex Doe"],
    [{ firstName: "Alex" }, "Alex"],
    [{ lastName: "Doe" }, "Doe"],
    [{ firstName: "  Alex ", lastName: " van  Doe " }, "Alex van Doe"],
    [{ nickname: "Lexi", organization: "Acme" }, "Lexi"],
    [{ firstName: "Alex", nickname: "Lexi" }, "Alex"],
    [{ organization: "Acme Inc." }, "Acme Inc."],
    [{ firstName: "Alex", organization: "Acme", company: true }, "Acme"],
    [{ firstName: "Alex", company: true }, "Alex"],
    [{ firstName: " ", lastName: "", nickname: null }, null],
    [{}, null],
  ] as [Partial<CardRow>, string | null][])("%j is %p", (fields, name) => {
    expect(cardName(row(fields))).toBe(name);
  });
});

describe("tallyName and foldName", () => {
  test("the name on the most entries, ties to the first in code-point order", () => {
    expect(tallyName(["B", "A", "B"])).toBe("B");
    expect(tallyName(["Zoe", "Amy"])).toBe("Amy");
    expect(tallyName(["amy", "Amy"])).toBe("Amy");
    expect(tallyName([])).toBeNull();
  });

  test("names compare without case, extra spaces or Unicode form", () => {
    expect(foldName("  ALEX   Doe ")).toBe("alex doe");
    expect(foldName("Zoe\u0301")).toBe(foldName("Zoé"));
  });
});

describe("buildContactBook", () => {
  test("phone numbers in national and international forms find the card", () => {
    const book = buildContactBook(
      [row({ firstName: "Alex", lastName: "Doe", phones: ["(555) 555-0100"] })],
      US,
    );
    for (const h of ["+15555550100", "+1 555-555-0100", "555.555.0100", "(555) 555-0100"])
      expect(book.nameOf(h)).toBe("Alex Doe");
    expect(book.nameOf("+15555550199")).toBeNull();
  });

  test("a national handle is read in its own country first, then the book's region", () => {
    const book = buildContactBook(
      [
        row({ firstName: "Gwen", phones: ["+44 20 7946 0018"] }),
        row({ firstName: "Sam", phones: ["(555) 555-0100"] }),
      ],
      US,
    );
    expect(book.nameOf("020 7946 0018", "gb")).toBe("Gwen");
    expect(book.nameOf("020 7946 0018")).toBeNull();
    expect(book.nameOf("555 555 0100", null)).toBe("Sam");
    expect(book.nameOf("555 555 0100", "nonsense")).toBe("Sam");
  });

  test("a card number's own country code is used before the book's region", () => {
    const book = buildContactBook(
      [row({ firstName: "Gwen", phones: [{ number: "020 7946 0018", country: "gb" }] })],
      US,
    );
    expect(book.nameOf("+442079460018")).toBe("Gwen");
  });

  test("without any region, international numbers still match", () => {
    const book = buildContactBook([row({ firstName: "Alex", phones: ["+1 555 555 0100"] })], {
      defaultRegion: null,
    });
    expect(book.nameOf("+15555550100")).toBe("Alex");
  });

  test("e-mail handles match in any case", () => {
    const book = buildContactBook([row({ firstName: "Alex", emails: ["Alex.Doe@Example.com"] })], US);
    expect(book.nameOf("alex.doe@example.com")).toBe("Alex");
    expect(book.nameOf("ALEX.DOE@EXAMPLE.COM")).toBe("Alex");
    expect(book.cardsNamed("alex")[0]?.emails).toEqual(["alex.doe@example.com"]);
  });

  test("a short code is matched by its digits", () => {
    const book = buildContactBook([row({ organization: "Pharmacy", phones: ["12345"] })], US);
    expect(book.nameOf("12345")).toBe("Pharmacy");
  });

  test("cards without a name are left out; nameless values find nothing", () => {
    const book = buildContactBook([row({ phones: ["+15555550100"], emails: ["x@example.com"] })], US);
    expect(book.cards).toBe(0);
    expect(book.nameOf("+15555550100")).toBeNull();
  });

  test("two cards with one name and no shared handle are two cards; cardsNamed returns both", () => {
    const book = buildContactBook(
      [
        row({ firstName: "Sam", lastName: "Lee", phones: ["+15555550101"] }),
        row({ firstName: "sam", lastName: "LEE", emails: ["sam@example.com"] }),
        row({ firstName: "Sam", lastName: "Leeds", phones: ["+15555550102"] }),
      ],
      US,
    );
    expect(book.cards).toBe(3);
    const named = book.cardsNamed("  SAM lee ");
    expect(named.map((c) => [c.name, c.phones, c.emails])).toEqual([
      ["Sam Lee", ["+15555550101"], []],
      ["sam LEE", [], ["sam@example.com"]],
    ]);
    expect(book.cardsNamed("Sam")).toEqual([]);
  });

  test("the same person in two sources (same name, a shared handle) is one card", () => {
    const book = buildContactBook(
      [
        row({ firstName: "Alex", lastName: "Doe", phones: ["(555) 555-0100"], emails: ["alex@example.com"] }),
        row({ firstName: "Alex", lastName: "Doe", phones: ["+1 555 555 0100", "+15555550111"] }),
      ],
      US,
    );
    expect(book.cards).toBe(1);
    expect(book.cardsNamed("Alex Doe")).toEqual([
      { name: "Alex Doe", phones: ["+15555550100", "+15555550111"], emails: ["alex@example.com"] },
    ]);
    expect(book.nameOf("+15555550111")).toBe("Alex Doe");
  });

  test("linked cards (ZLINKID) are one card named by the card preferred for the link name", () => {
    const book = buildContactBook(
      [
        row({ firstName: "Alexander", lastName: "Doe", linkId: "L1", phones: ["+15555550100"] }),
        row({
          firstName: "Alex",
          lastName: "Doe",
          linkId: "L1",
          preferredForLinkName: true,
          emails: ["a@x.com"],
        }),
        row({ firstName: "Al", linkId: "L2", phones: ["+15555550122"] }),
      ],
      US,
    );
    expect(book.cards).toBe(2);
    expect(book.nameOf("+15555550100")).toBe("Alex Doe");
    expect(book.nameOf("a@x.com")).toBe("Alex Doe");
    expect(book.cardsNamed("Alexander Doe")).toEqual([]);
    expect(book.cardsNamed("Alex Doe")[0]).toEqual({
      name: "Alex Doe",
      phones: ["+15555550100"],
      emails: ["a@x.com"],
    });
  });

  test("a handle on cards with different names: the name on the most cards, then code-point order", () => {
    const shared = "+15555550100";
    const most = buildContactBook(
      [
        row({ firstName: "Zed", phones: [shared] }),
        row({ firstName: "Mum", phones: [shared, "+15555550133"] }),
        row({ firstName: "Mum", phones: [shared], emails: ["mum@example.com"] }),
      ],
      US,
    );
    expect(most.nameOf(shared)).toBe("Mum");
    const tie = [row({ firstName: "Zed", phones: [shared] }), row({ firstName: "Amy", phones: [shared] })];
    expect(buildContactBook(tie, US).nameOf(shared)).toBe("Amy");
    expect(buildContactBook([...tie].reverse(), US).nameOf(shared)).toBe("Amy");
  });

  test("cardsNamed hands out copies", () => {
    const book = buildContactBook([row({ firstName: "Alex", phones: ["+15555550100"] })], US);
    book.cardsNamed("alex")[0]?.phones.push("+10000000000");
    expect(book.cardsNamed("alex")[0]?.phones).toEqual(["+15555550100"]);
  });

  test("a handle asked again, in its own region or another, gets the same answers as the first time", () => {
    const book = buildContactBook(
      [
        row({ firstName: "Alex", phones: ["(555) 555-0100"] }),
        row({ firstName: "Gwen", phones: [{ number: "020 7946 0018", country: "gb" }] }),
      ],
      US,
    );
    for (let i = 0; i < 3; i++) {
      expect(book.nameOf("5555550100")).toBe("Alex");
      expect(book.nameOf("5555550100", "us")).toBe("Alex");
      expect(book.nameOf("02079460018", "GB")).toBe("Gwen");
      expect(book.nameOf("02079460018")).toBeNull();
      expect(book.nameOf("02079460018", "gb")).toBe("Gwen");
    }
  });

  test("the empty book knows nobody", () => {
    expect(EMPTY_BOOK.cards).toBe(0);
    expect(EMPTY_BOOK.nameOf("+15555550100")).toBeNull();
    expect(EMPTY_BOOK.nameOf("")).toBeNull();
    expect(EMPTY_BOOK.cardsNamed("x")).toEqual([]);
  });
});
