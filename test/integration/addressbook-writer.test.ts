/**
 * The demo's AddressBook-v22 writer (src/demo/addressbook-writer.ts) makes files shaped like Contacts'
 * own: only real column names (macOS 26's, docs/CONTACTS.md), Core Data's entity table, WAL mode, and
 * cards that gw's reader reads back; it can reopen a file it made.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { readAddressBook } from "../../src/contacts/reader.ts";
import { addressBookPath, createAddressBook } from "../../src/demo/addressbook-writer.ts";
import { tempDir } from "../helpers/temp.ts";

/** The columns of these tables in a real macOS 26.6 AddressBook-v22.abcddb (docs/CONTACTS.md). */
const REAL: Record<string, string> = {
  ZABCDRECORD:
    "Z_PK Z_ENT Z_OPT ZCREATIONDATEYEAR ZDISPLAYFLAGS ZIOSLEGACYIDENTIFIER ZMODIFICATIONDATEYEAR ZSYNCSTATUS ZCONTAINER ZEXTERNALGROUPBEHAVIOR ZBIRTHDAYYEAR ZPREFERREDFORLINKNAME ZPREFERREDFORLINKPHOTO ZPRIVACYFLAGS ZCONTACTINDEX ZCONTAINER1 ZCONTAINERWHERECONTACTISME ZLUNARBIRTHDAYCOMPONENTS ZNOTE ZASSISTANTSYNCANCHOR ZSHARECOUNT ZSYNCCOUNT ZVERSION ZCONTAINER2 ZGUARDIANFLAGS ZISALL ZTYPE ZINFO ZME Z22_ME ZPROVIDERMETADATA ZCREATIONDATE ZCREATIONDATEYEARLESS ZMODIFICATIONDATE ZMODIFICATIONDATEYEARLESS ZBIRTHDAY ZBIRTHDAYYEARLESS ZIMAGESYNCFAILEDTIME ZWALLPAPERSYNCFAILEDTIME ZLASTSYNCDATE ZEXTERNALCOLLECTIONPATH ZEXTERNALFILENAME ZEXTERNALHASH ZEXTERNALIMAGEURI ZEXTERNALMODIFICATIONTAG ZEXTERNALURI ZEXTERNALUUID ZUNIQUEID ZNAME ZNAMENORMALIZED ZTMPREMOTELOCATION ZCROPRECT ZCROPRECTID ZDEPARTMENT ZDOWNTIMEWHITELIST ZFIRSTNAME ZIDENTITYUNIQUEID ZIMAGEREFERENCE ZIMAGETYPE ZJOBTITLE ZLASTNAME ZLINKID ZMAIDENNAME ZMIDDLENAME ZNICKNAME ZORGANIZATION ZPHONEMEDATA ZPHONETICFIRSTNAME ZPHONETICLASTNAME ZPHONETICMIDDLENAME ZPHONETICORGANIZATION ZPREFERREDAPPLEPERSONAIDENTIFIER ZPREFERREDLIKENESSSOURCE ZSORTINGFIRSTNAME ZSORTINGLASTNAME ZSUFFIX ZTITLE ZTMPHOMEPAGE ZWALLPAPERURI ZASSISTANTVALIDITY ZCREATEDVERSION ZLASTDOTMACACCOUNT ZLASTSAVEDVERSION ZSYNCANCHOR ZEXTERNALIDENTIFIER ZNAME1 ZPROVIDERIDENTIFIER ZREMOTELOCATION ZSERIALNUMBER ZEXTERNALREPRESENTATION ZMODIFIEDUNIQUEIDSDATA ZSEARCHELEMENTDATA ZAVATARRECIPEDATA ZCROPRECTHASH ZIMAGEDATA ZIMAGEHASH ZMEMOJIMETADATA ZSENSITIVECONTENTCONFIGURATION ZTHUMBNAILIMAGEDATA ZWALLPAPER",
  ZABCDPHONENUMBER:
    "Z_PK Z_ENT Z_OPT ZIOSLEGACYIDENTIFIER ZISPRIMARY ZISPRIVATE ZORDERINGINDEX ZOWNER Z22_OWNER ZAREACODE ZCOUNTRYCODE ZEXTENSION ZFULLNUMBER ZLABEL ZLASTFOURDIGITS ZLOCALNUMBER ZUNIQUEID",
  ZABCDEMAILADDRESS:
    "Z_PK Z_ENT Z_OPT ZIOSLEGACYIDENTIFIER ZISPRIMARY ZISPRIVATE ZORDERINGINDEX ZOWNER Z22_OWNER ZADDRESS ZADDRESSNORMALIZED ZLABEL ZUNIQUEID",
  Z_PRIMARYKEY: "Z_ENT Z_NAME Z_SUPER Z_MAX",
};

function written() {
  const path = addressBookPath(join(tempDir("gw-abwriter-"), "AddressBook"), "1A2B-ICLOUD");
  const w = createAddressBook(path);
  const pk = w.addCard({
    first: "Alex",
    last: "Doe",
    phones: ["(555) 555-0100", "+15555550111"],
    emails: ["a@x.com"],
  });
  w.addGroup("Family");
  w.close();
  return { path, pk };
}

test("every table and column the writer makes is one a real store has, in its order", () => {
  const { path } = written();
  const db = new Database(path, { readonly: true });
  const tables = db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((t) => t.name);
  expect(tables).toEqual(Object.keys(REAL).sort());
  for (const t of tables) {
    const cols = db
      .query<{ name: string }, []>(`PRAGMA table_info(${t})`)
      .all()
      .map((c) => c.name);
    const real = (REAL[t] as string).split(" ");
    expect(cols.filter((c) => !real.includes(c))).toEqual([]);
    expect(cols).toEqual(real.filter((c) => cols.includes(c)));
  }
  expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
  db.close();
});

test("Core Data's bookkeeping: entity names and numbers, the container, the card's ids", () => {
  const { path, pk } = written();
  const db = new Database(path, { readonly: true });
  const ents = db
    .query<{ n: string; e: number }, []>("SELECT Z_NAME AS n, Z_ENT AS e FROM Z_PRIMARYKEY")
    .all();
  expect(ents).toContainEqual({ n: "ABCDContact", e: 22 });
  expect(ents).toContainEqual({ n: "CNCDContainer", e: 25 });
  const rows = db
    .query<{ Z_PK: number; Z_ENT: number; ZUNIQUEID: string; ZCONTAINER1: number | null }, []>(
      "SELECT Z_PK, Z_ENT, ZUNIQUEID, ZCONTAINER1 FROM ZABCDRECORD ORDER BY Z_PK",
    )
    .all();
  expect(rows.map((r) => r.Z_ENT)).toEqual([25, 22, 19]);
  expect(rows[1]?.ZUNIQUEID).toMatch(/^[0-9A-F-]{36}:ABPerson$/);
  expect(rows[1]?.ZCONTAINER1).toBe(rows[0]?.Z_PK as number);
  expect(rows[1]?.Z_PK).toBe(pk);
  expect(db.query("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'ABCDRecord'").get()).toEqual({ Z_MAX: 3 });
  const phones = db
    .query("SELECT ZOWNER, ZFULLNUMBER, ZISPRIMARY, ZORDERINGINDEX, ZLASTFOURDIGITS FROM ZABCDPHONENUMBER")
    .all();
  expect(phones).toEqual([
    { ZOWNER: pk, ZFULLNUMBER: "(555) 555-0100", ZISPRIMARY: 1, ZORDERINGINDEX: 0, ZLASTFOURDIGITS: "0100" },
    { ZOWNER: pk, ZFULLNUMBER: "+15555550111", ZISPRIMARY: 0, ZORDERINGINDEX: 1, ZLASTFOURDIGITS: "0111" },
  ]);
  db.close();
});

test("the reader reads what the writer wrote, and a reopened file takes more", () => {
  const { path, pk } = written();
  const first = readAddressBook(path);
  expect(
    first.ok && first.rows.map((r) => [r.firstName, r.lastName, r.phones.map((p) => p.number), r.emails]),
  ).toEqual([["Alex", "Doe", ["(555) 555-0100", "+15555550111"], ["a@x.com"]]]);
  const w = createAddressBook(path);
  w.editCard(pk, { nickname: "Lex", emails: ["lex@x.com", "a@x.com"] });
  w.addCard({ organization: "Acme", company: true });
  w.close();
  const second = readAddressBook(path);
  expect(second.ok && second.rows.map((r) => [r.nickname, r.organization, r.company, r.emails])).toEqual([
    ["Lex", null, false, ["lex@x.com", "a@x.com"]],
    [null, "Acme", true, []],
  ]);
});
