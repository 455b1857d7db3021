/**
 * The Contacts runner (src/contacts/runner.ts) over real SQLite files: it follows edits made while it
 * runs (file notifications, then the poll), a folder or an account that appears, a file that goes bad,
 * and it does not read again while nothing changes. Waits are deadline-bounded polls of current(), never
 * fixed sleeps, except where the test is that nothing happens.
 */
import { afterEach, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Contacts, createContacts } from "../../src/contacts/runner.ts";
import { addressBookPath, createAddressBook } from "../../src/demo/addressbook-writer.ts";
import { recordingLogger } from "../helpers/logger.ts";
import { waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const running: Contacts[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.stop();
});

function start(dir: string, pollMs: number, log = recordingLogger()) {
  const contacts = createContacts({ dir, defaultRegion: "US", log, pollMs, debounceMs: 20 });
  running.push(contacts);
  contacts.start();
  return contacts;
}

const until = (c: Contacts, handle: string, name: string | null) =>
  waitFor(() => (c.current().nameOf(handle) === name ? true : undefined), `${handle} to be ${name}`, 5000);

test("a card edited while the runner runs: current() gives the new name (file notifications)", async () => {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  const w = createAddressBook(addressBookPath(dir, "AAAA-ICLOUD"));
  const pk = w.addCard({ first: "Alex", last: "Doe", phones: ["(555) 555-0100"] });
  // The poll is an hour away: only a notification can bring the edit in time.
  const contacts = start(dir, 3_600_000);
  expect(contacts.current().nameOf("+15555550100")).toBe("Alex Doe");
  w.editCard(pk, { first: "Alexandra" });
  await until(contacts, "+15555550100", "Alexandra Doe");
  w.editCard(pk, { phones: ["+1 555 555 0177"] });
  await until(contacts, "+15555550177", "Alexandra Doe");
  expect(contacts.current().nameOf("+15555550100")).toBeNull();
  w.close();
  expect(contacts.status()).toEqual({ files: 1, cards: 1, problem: null });
});

test("no Contacts folder: an empty book with the problem set, then the folder appears and is read", async () => {
  const parent = tempDir("gw-contacts-");
  const dir = join(parent, "AddressBook");
  const contacts = start(dir, 50);
  expect(contacts.current().cards).toBe(0);
  expect(contacts.status()).toEqual({ files: 0, cards: 0, problem: `no Contacts folder at ${dir}` });
  const w = createAddressBook(addressBookPath(dir, "AAAA-ICLOUD"));
  w.addCard({ first: "Bea", emails: ["Bea@Example.com"] });
  w.close();
  await until(contacts, "bea@example.com", "Bea");
  expect(contacts.status()).toEqual({ files: 1, cards: 1, problem: null });
});

test("a new account, and an account removed", async () => {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  const a = createAddressBook(addressBookPath(dir, "AAAA-ICLOUD"));
  a.addCard({ first: "Alex", phones: ["+15555550100"] });
  a.close();
  const contacts = start(dir, 50);
  const b = createAddressBook(addressBookPath(dir, "BBBB-GOOGLE"));
  b.addCard({ first: "Gwen", phones: ["+44 20 7946 0018"] });
  b.close();
  await until(contacts, "+442079460018", "Gwen");
  expect(contacts.status().files).toBe(2);
  rmSync(join(dir, "Sources", "AAAA-ICLOUD"), { recursive: true });
  await until(contacts, "+15555550100", null);
  expect(contacts.status()).toEqual({ files: 1, cards: 1, problem: null });
});

test("a file that is not SQLite is a problem; the others are read; fixed, it is read too", async () => {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  const good = createAddressBook(addressBookPath(dir, "AAAA-GOOD"));
  good.addCard({ first: "Alex", phones: ["+15555550100"] });
  good.close();
  const bad = addressBookPath(dir, "BBBB-BAD");
  writeFileSync(bad, "not a database ".repeat(100));
  const contacts = start(dir, 50);
  expect(contacts.current().nameOf("+15555550100")).toBe("Alex");
  expect(contacts.status().files).toBe(1);
  expect(contacts.status().problem).toStartWith(`${bad}: `);
  rmSync(bad);
  const fixed = createAddressBook(bad);
  fixed.addCard({ first: "Cy", phones: ["+15555550102"] });
  fixed.close();
  await until(contacts, "+15555550102", "Cy");
  expect(contacts.status()).toEqual({ files: 2, cards: 2, problem: null });
});

test("a file that goes bad keeps the cards it last gave, with the problem reported", async () => {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  const path = addressBookPath(dir, "AAAA-ICLOUD");
  const w = createAddressBook(path);
  w.addCard({ first: "Alex", phones: ["+15555550100"] });
  w.close();
  const log = recordingLogger();
  const contacts = start(dir, 50, log);
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
  writeFileSync(path, "garbage ".repeat(1000));
  await waitFor(() => contacts.status().problem ?? undefined, "the problem", 5000);
  expect(contacts.current().nameOf("+15555550100")).toBe("Alex");
  expect(contacts.status().files).toBe(1);
  expect(log.entries.some((e) => e.level === "warn" && e.msg === "contacts cannot be read in full")).toBe(
    true,
  );
});

test("nothing changes, nothing is read again (no busy loop); after stop, nothing is read at all", async () => {
  const dir = join(tempDir("gw-contacts-"), "AddressBook");
  const path = addressBookPath(dir, "AAAA-ICLOUD");
  const w = createAddressBook(path);
  const pk = w.addCard({ first: "Alex", phones: ["+15555550100"] });
  w.close();
  const log = recordingLogger();
  const contacts = start(dir, 20, log);
  contacts.start();
  const reads = () => log.entries.filter((e) => e.msg === "contacts read").length;
  await Bun.sleep(300); // fifteen polls, and any notification gw's own reads could cause
  expect(reads()).toBe(1);
  contacts.stop();
  contacts.stop();
  const again = createAddressBook(path); // the writer reopens the file it made
  again.editCard(pk, { first: "Alexandra" });
  again.close();
  await Bun.sleep(200); // ten polls' worth: a stopped runner reads nothing
  expect([reads(), contacts.current().nameOf("+15555550100")]).toEqual([1, "Alex"]);
  const fresh = start(dir, 3_600_000);
  expect(fresh.current().nameOf("+15555550100")).toBe("Alexandra");
});
