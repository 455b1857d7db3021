/**
 * `gw doctor`'s Contacts line (src/doctor/contacts.ts): ok with the number of cards when the databases
 * can be read, a warn (never a fail, exit 0) when the folder is missing or a file cannot be read, and no
 * line at all when Contacts is off. The checks run as a function over real files, then once through the
 * real `gw doctor --json`.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressBookPath, createAddressBook } from "../../src/demo/addressbook-writer.ts";
import type { Check } from "../../src/doctor/check.ts";
import { contactsChecks } from "../../src/doctor/contacts.ts";
import { freePort, isolatedEnv, spawnGw } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

function contactsFolder(cards: number): string {
  const dir = join(tempDir("gw-doctor-contacts-"), "AddressBook");
  createAddressBook(addressBookPath(dir)).close();
  const w = createAddressBook(addressBookPath(dir, "1A2B-ICLOUD"));
  for (let i = 0; i < cards; i++)
    w.addCard({ first: `Friend${i}`, phones: [`+1555555${String(i).padStart(4, "0")}`] });
  w.close();
  return dir;
}
const on = (contactsDir: string) => ({ contactsOn: true, contactsDir, defaultRegion: "US" });

describe("contactsChecks", () => {
  test("readable: one ok line with the cards and databases", () => {
    const dir = contactsFolder(3);
    expect(contactsChecks(on(dir))).toEqual([
      { id: "contacts", level: "ok", what: `Contacts readable at ${dir}: 3 cards in 2 databases` },
    ]);
  });

  test("no folder: a warn that says so, why it matters and what to do", () => {
    const dir = join(tempDir("gw-doctor-contacts-"), "missing");
    const [c] = contactsChecks(on(dir));
    expect(c?.level).toBe("warn");
    expect(c?.what).toBe(`Contacts cannot be read: no Contacts folder at ${dir}`);
    expect(c?.why).toContain("instead of names");
    expect(c?.fix).toContain("Privacy & Security → Contacts");
  });

  test("one file unreadable: a warn that still counts what was read", () => {
    const dir = contactsFolder(1);
    writeFileSync(addressBookPath(dir, "9Z-BROKEN"), "x".repeat(4096));
    const [c] = contactsChecks(on(dir));
    expect(c?.level).toBe("warn");
    expect(c?.what).toStartWith(
      `Contacts read in part at ${dir} (1 card in 2 databases); cannot read ${dir}/Sources/9Z-BROKEN/`,
    );
  });

  test("Contacts off: no line", () => {
    expect(contactsChecks({ ...on("/nowhere"), contactsOn: false })).toEqual([]);
  });
});

describe("gw doctor --json", () => {
  async function doctor(extra: Record<string, string>) {
    const env = isolatedEnv(tempDir(), { GW_BIND_PORT: String(freePort()), ...extra });
    writeFileSync(env.GW_ALLOWLIST_PATH as string, "");
    const gw = spawnGw(["doctor", "--json"], env);
    const code = await gw.exited;
    const report = JSON.parse(gw.output().stdout) as { checks: Check[] };
    return { code, contacts: report.checks.filter((c) => c.id === "contacts") };
  }

  test("GW_CONTACTS_DIR set: the line is there, in the config scope", async () => {
    const dir = contactsFolder(2);
    const { contacts } = await doctor({ GW_CONTACTS_DIR: dir });
    expect(contacts).toEqual([
      {
        id: "contacts",
        scope: "config",
        level: "ok",
        what: `Contacts readable at ${dir}: 2 cards in 2 databases`,
      },
    ]);
  });

  test("a missing folder is a warn, and a warn alone does not fail doctor; GW_CONTACTS=0 drops the line", async () => {
    const missing = join(tempDir(), "AddressBook");
    const warned = await doctor({ GW_CONTACTS_DIR: missing });
    expect(warned.contacts.map((c) => c.level)).toEqual(["warn"]);
    const off = await doctor({ GW_CONTACTS_DIR: missing, GW_CONTACTS: "0" });
    expect(off.contacts).toEqual([]);
    expect(warned.code).toBe(off.code);
  });
});
