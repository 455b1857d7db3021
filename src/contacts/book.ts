/**
 * The contact book (pure builder): card rows as read from the Contacts databases in, a lookup from a
 * Messages handle to a name and from a name to its cards out. A card's name is first + last, else the
 * nickname, else the organisation (a card marked as a company shows its organisation first, as Contacts
 * does); a card with no name is left out. Cards that are one person are merged: the same ZLINKID (Contacts'
 * own link between accounts; the card marked preferred for the link name gives the name), or the same name
 * (case-insensitive) sharing a phone number or an e-mail address. When one handle is on several cards with
 * different names, the name on the most cards wins, then the first in code-point order (no store order is
 * stable: Z_PK changes across syncs), so the answer depends on the cards alone. The build is a computation
 * in steps (steps.ts: a yield every few cards, each step well under a millisecond), so a runner can spread
 * 10,000 cards over many short slices; `buildContactBook` runs it at once.
 */
import type { CountryCode } from "libphonenumber-js/min";
import { emailKey, firstRegion, handleKey, phoneKey, regionCode } from "./keys.ts";
import { drain, type Steps } from "./steps.ts";

/** One card as gw shows it: its name, its phone numbers (E.164; see keys.ts) and e-mail addresses (lower case). */
export interface Card {
  name: string;
  phones: string[];
  emails: string[];
}

export interface ContactBook {
  /**
   * The name of the card holding this handle (a phone number or an e-mail address), or null. A phone
   * number without a country code is read in `region` (the handle's country), else the book's region.
   */
  nameOf(handle: string, region?: string | null): string | null;
  /** The cards with exactly this name, ignoring case and surrounding spaces (`gw allow <name>`). */
  cardsNamed(name: string): Card[];
  /** How many cards (after merging) the book holds. */
  readonly cards: number;
}

/** One contact row of ZABCDRECORD with its numbers and addresses, as the reader hands it over. */
export interface CardRow {
  firstName: string | null;
  lastName: string | null;
  nickname: string | null;
  organization: string | null;
  /** ZDISPLAYFLAGS bit 0: Contacts shows the card as a company. */
  company: boolean;
  /** ZLINKID: cards in several accounts that Contacts shows as one. */
  linkId: string | null;
  /** ZPREFERREDFORLINKNAME: this card gives the linked cards their name. */
  preferredForLinkName: boolean;
  /** ZFULLNUMBER as typed, with ZCOUNTRYCODE when the row has one. */
  phones: { number: string; country: string | null }[];
  emails: string[];
}

export interface BookOptions {
  /** Region for numbers written without a country code (GW_DEFAULT_REGION, else the locale's). */
  defaultRegion: string | null;
  /**
   * Phone keys already worked out, by region and number as typed; a runner that rebuilds the book keeps
   * one across builds (parsing is most of a build's time). One entry per distinct number and region.
   */
  phoneKeys?: Map<string, string | null>;
}

const clean = (s: string | null): string => (s ?? "").replace(/\s+/g, " ").trim();

/** The name Contacts would show for a card row, or null when it has none. */
export function cardName(
  row: Pick<CardRow, "firstName" | "lastName" | "nickname" | "organization" | "company">,
): string | null {
  const person = [clean(row.firstName), clean(row.lastName)].filter((s) => s !== "").join(" ");
  const org = clean(row.organization);
  const name = (row.company && org) || person || clean(row.nickname) || org;
  return name === "" ? null : name;
}

/** How names compare for `cardsNamed` and merging: Unicode-normalised, spaces collapsed, lower case. */
export const foldName = (name: string): string => clean(name.normalize("NFKC")).toLowerCase();

/** The name on the most entries; ties go to the first in code-point order. */
export function tallyName(names: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  let best: string | null = null;
  let bestCount = 0;
  for (const [n, c] of counts) {
    if (c > bestCount || (c === bestCount && best !== null && n < best)) [best, bestCount] = [n, c];
  }
  return best;
}

interface Named {
  name: string;
  folded: string;
  row: CardRow;
  keys: string[];
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Cards parsed between two yields: a phone number costs ~20-25 µs to parse once libphonenumber is warm (far
 * more in a fresh process), so a step stays well under a millisecond.
 */
const CARDS_PER_STEP = 4;
/** Items of the cheap passes (merging, tallying) between two yields. */
const ITEMS_PER_STEP = 128;
/**
 * Handles whose key a book keeps (then it starts again): parsing one costs ~25 µs in a busy loop but
 * 0.3-1 ms once in a while, as a chat.db row comes, so each sender's is worked out once per book.
 */
const HANDLE_KEYS_KEPT = 10_000;

function* namedCards(
  rows: readonly CardRow[],
  region: CountryCode | null,
  cache: Map<string, string | null>,
): Steps<Named[]> {
  const keyOf = (raw: string, r: CountryCode | null) => {
    const id = `${r ?? ""}\0${raw}`;
    const known = cache.get(id);
    if (known !== undefined) return known;
    const k = phoneKey(raw, r);
    cache.set(id, k);
    return k;
  };
  const out: Named[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (i % CARDS_PER_STEP === CARDS_PER_STEP - 1) yield;
    const row = rows[i] as CardRow;
    const name = cardName(row);
    if (name === null) continue;
    const keys = new Set<string>();
    for (const p of row.phones) {
      const k = keyOf(p.number, p.country === null ? region : (regionCode(p.country) ?? region));
      if (k !== null) keys.add(k);
    }
    for (const e of row.emails) {
      const k = emailKey(e);
      if (k !== null) keys.add(k);
    }
    out.push({ name, folded: foldName(name), row, keys: [...keys] });
  }
  return out;
}

/** Groups of card indexes that are one person (see the header), each in input order. */
function* mergeGroups(cards: readonly Named[]): Steps<number[][]> {
  const parent = cards.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] as number] as number;
    return i;
  };
  const firstWith = new Map<string, number>();
  const join = (tag: string, i: number) => {
    const j = firstWith.get(tag);
    if (j === undefined) firstWith.set(tag, i);
    else parent[find(i)] = find(j);
  };
  for (let i = 0; i < cards.length; i++) {
    if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
    const c = cards[i] as Named;
    if (c.row.linkId) join(`link\0${c.row.linkId}`, i);
    for (const k of c.keys) join(`name\0${c.folded}\0${k}`, i);
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < cards.length; i++) {
    if (i % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
    pushTo(groups, find(i), i);
  }
  return [...groups.values()].sort((a, b) => (a[0] as number) - (b[0] as number));
}

function mergedCard(members: readonly Named[]): Card {
  const preferred = members.find((m) => m.row.linkId && m.row.preferredForLinkName);
  const name = preferred?.name ?? tallyName(members.map((m) => m.name)) ?? "";
  const keys = [...new Set(members.flatMap((m) => m.keys))];
  return { name, phones: keys.filter((k) => !k.includes("@")), emails: keys.filter((k) => k.includes("@")) };
}

/** The book, built in steps (see the header); nothing is shared with an earlier book but `phoneKeys`. */
export function* buildContactBookSteps(rows: readonly CardRow[], opts: BookOptions): Steps<ContactBook> {
  const region = regionCode(opts.defaultRegion);
  const named = yield* namedCards(rows, region, opts.phoneKeys ?? new Map());
  const groups = yield* mergeGroups(named);
  const namesByKey = new Map<string, string[]>();
  const byName = new Map<string, Card[]>();
  let n = 0;
  for (const g of groups) {
    if (++n % ITEMS_PER_STEP === 0) yield;
    const card = mergedCard(g.map((i) => named[i] as Named));
    for (const k of card.phones) pushTo(namesByKey, k, card.name);
    for (const k of card.emails) pushTo(namesByKey, k, card.name);
    pushTo(byName, foldName(card.name), card);
  }
  const nameByKey = new Map<string, string>();
  for (const [k, names] of namesByKey) {
    if (++n % ITEMS_PER_STEP === 0) yield;
    nameByKey.set(k, tallyName(names) as string);
  }
  const cards = groups.length;
  const handleKeys = new Map<string, string | null>();
  return {
    nameOf(handle, handleRegion) {
      const id = `${handleRegion ?? ""}\0${handle}`;
      let key = handleKeys.get(id);
      if (key === undefined) {
        key = handleKey(handle, firstRegion(handleRegion, region));
        if (handleKeys.size >= HANDLE_KEYS_KEPT) handleKeys.clear();
        handleKeys.set(id, key);
      }
      return key === null ? null : (nameByKey.get(key) ?? null);
    },
    cardsNamed: (name) =>
      (byName.get(foldName(name)) ?? []).map((c) => ({ ...c, phones: [...c.phones], emails: [...c.emails] })),
    cards,
  };
}

export function buildContactBook(rows: readonly CardRow[], opts: BookOptions): ContactBook {
  return drain(buildContactBookSteps(rows, opts));
}

/** The book with no cards: Contacts off, not read yet, or nothing readable. */
export const EMPTY_BOOK: ContactBook = buildContactBook([], { defaultRegion: null });
