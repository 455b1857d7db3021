/**
 * Contact names (extensions.md §6) on a live `gw serve` over real HTTP, reading a chat.db written as Messages
 * writes it and a Contacts folder written as Contacts does (two accounts): senders reach agents by their
 * card's name (numbers written in national and international forms, e-mail handles), the allowlist's
 * display name still wins, GET /channels names chats by people and finds one with `q`, `gw quarantine` shows
 * the name beside a stranger's number, `gw allow` takes a name that matches one card (all its handles) and
 * refuses one that matches two. A card edited while gw serve runs names new messages; stored ones keep theirs.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressBookPath, createAddressBook } from "../../src/demo/addressbook-writer.ts";
import { chatDbIn, chatDbServeEnv } from "../helpers/device.ts";
import { freePort, isolatedEnv, spawnGw, stopGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { TOKEN } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

const MOM = "+15555550142";
const MOM_MAIL = "mom@example.com";
const GRANDPA = "+15555550143";
const JAMIE_A = "+15555550150";
const JAMIE_B = "+15555550151";
const STRANGER = "+15555550166";
const ANN = "+15555550100";

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
const dir = tempDir();
const chat = chatDbIn(dir);
const contactsDir = join(dir, "AddressBook");
mkdirSync(contactsDir);
const icloud = createAddressBook(addressBookPath(contactsDir, "ICLOUD-0001"));
const local = createAddressBook(addressBookPath(contactsDir, "LOCAL-0002"));
// Mom's number as she typed it (national), her e-mail in mixed case; Grandpa international with dashes.
const mom = icloud.addCard({ first: "Mom", phones: ["(555) 555-0142"], emails: ["Mom@Example.com"] });
local.addCard({ first: "Grandpa", last: "Joe", phones: ["+1 555-555-0143"] });
// The same person in both accounts, linked; and two cards sharing a name.
icloud.addCard({ first: "Ann", last: "Lee", phones: [ANN], linkId: "L-ANN", preferredForLinkName: true });
local.addCard({ first: "Annie", phones: ["555.555.0100"], linkId: "L-ANN" });
icloud.addCard({ first: "Jamie", phones: [JAMIE_A] });
local.addCard({ first: "Jamie", phones: [JAMIE_B] });
local.addCard({ first: "Sam", last: "Stranger", phones: [STRANGER] });
for (const who of [MOM, MOM_MAIL, GRANDPA, STRANGER])
  chat.writer.chat({ guid: `any;-;${who}`, style: 45, chatIdentifier: who, participants: [who] });
chat.writer.chat({
  guid: "any;+;chatfamily",
  style: 43,
  chatIdentifier: "chatfamily",
  participants: [MOM, GRANDPA],
});
const port = freePort();
const env = isolatedEnv(dir, {
  GW_BEARER_TOKEN: TOKEN,
  GW_BIND_PORT: String(port),
  GW_CHAT_DB_PATH: chat.path,
  GW_CONTACTS_DIR: contactsDir,
  GW_DEFAULT_REGION: "US",
  GW_DEVICE_POLL_INTERVAL_MS: "100",
});
const allow = (id: string, person: string, name?: string) =>
  `[[entry]]\nsource = "device_messenger"\nid = "${id}"\nperson_id = "${person}"\n${name ? `display_name = "${name}"\n` : ""}`;
// Ann's allowlist entry names her; Mom's and Grandpa's do not (Contacts does).
writeFileSync(
  env.GW_ALLOWLIST_PATH as string,
  [
    allow(ANN, "ann", "Ann (allowlist)"),
    allow(MOM, "mom"),
    allow(MOM_MAIL, "mom"),
    allow(GRANDPA, "grandpa"),
  ].join(""),
);
const serve = spawnGw(["serve"], env);
await waitForHealth(port);
afterAll(async () => {
  await stopGw(serve);
  chat.writer.close();
  icloud.close();
  local.close();
});

type Listed = { messages: { text: string; sender: { id: string; display_name: string } }[] };
const get = async <T>(path: string) =>
  (await (
    await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "contacts" },
    })
  ).json()) as T;
const senderOf = (text: string) =>
  waitFor(async () => {
    const { messages } = await get<Listed>("/messages/unread?limit=100");
    return messages.find((m) => m.text === text)?.sender;
  }, `"${text}"`);
async function run(args: string[]) {
  const p = spawnGw(args, env);
  return { code: await p.exited, ...p.output() };
}

test("senders by their card's name, the allowlist's name first; e-mail handles; channels named and found by q", async () => {
  chat.writer.message({ chatGuid: `any;-;${MOM}`, from: MOM, text: "call me" });
  chat.writer.message({ chatGuid: `any;-;${MOM_MAIL}`, from: MOM_MAIL, text: "from my mail" });
  chat.writer.message({ chatGuid: `any;-;${GRANDPA}`, from: GRANDPA, text: "hello kiddo" });
  chat.writer.message({ chatGuid: `any;-;${ANN}`, from: ANN, text: "ann here" });
  chat.writer.message({ chatGuid: "any;+;chatfamily", from: GRANDPA, text: "family dinner?" });
  expect((await senderOf("call me")).display_name).toBe("Mom");
  expect((await senderOf("from my mail")).display_name).toBe("Mom");
  expect((await senderOf("hello kiddo")).display_name).toBe("Grandpa Joe");
  expect((await senderOf("ann here")).display_name).toBe("Ann (allowlist)");
  await senderOf("family dinner?");
  type Channels = { channels: { channel_id: string; name: string }[] };
  const { channels } = await get<Channels>("/channels");
  const nameOf = (id: string) => channels.find((c) => c.channel_id === id)?.name;
  expect(nameOf(MOM)).toBe("Mom");
  expect(nameOf("any;+;chatfamily")).toBe("Mom, Grandpa Joe");
  expect((await get<Channels>("/channels?q=grandpa")).channels.map((c) => c.channel_id).sort()).toEqual(
    ["any;+;chatfamily", GRANDPA].sort(),
  );
  expect(
    (await get<Channels>(`/channels?q=${encodeURIComponent("MOM@example")}`)).channels.map(
      (c) => c.channel_id,
    ),
  ).toEqual([MOM_MAIL]);
  expect((await get<Channels>("/channels?q=nobody")).channels).toEqual([]);
});

test("a card edited while gw serve runs names new messages; stored ones keep their name", async () => {
  chat.writer.message({ chatGuid: `any;-;${MOM}`, from: MOM, text: "before the edit" });
  expect((await senderOf("before the edit")).display_name).toBe("Mom");
  icloud.editCard(mom, { first: "Mother" });
  // Each message tells whether the new name has been read yet; the first after the re-read has it.
  let n = 0;
  await waitFor(async () => {
    n += 1;
    chat.writer.message({ chatGuid: `any;-;${MOM}`, from: MOM, text: `after the edit ${n}` });
    return (await senderOf(`after the edit ${n}`)).display_name === "Mother" ? true : undefined;
  }, "a message named by the edited card");
  expect((await senderOf("before the edit")).display_name).toBe("Mom");
});

test("gw quarantine shows the Contacts name; gw allow takes a name matching one card, refuses one matching two", async () => {
  chat.writer.message({ chatGuid: `any;-;${STRANGER}`, from: STRANGER, text: "it's Sam" });
  await waitFor(async () => {
    const q = await get<Listed>("/messages/quarantine");
    return q.messages.some((m) => m.text === "it's Sam") ? true : undefined;
  }, "Sam's message held");
  const q = await run(["quarantine"]);
  expect(q.stdout).toContain(`  ${STRANGER} (Sam Stranger): 1 message over iMessage`);
  expect(q.stdout).toContain(`allow: gw allow device_messenger '${STRANGER}' --person sam-stranger`);
  const twice = await run(["allow", "device_messenger", "Jamie", "--person", "jamie"]);
  expect(twice.code).toBe(1);
  expect(twice.stderr).toContain('"Jamie" matches 2 cards');
  expect(twice.stderr).toContain(JAMIE_A);
  expect(twice.stderr).toContain(JAMIE_B);
  const none = await run(["allow", "device_messenger", "Nobody Here", "--person", "x"]);
  expect([none.code, none.stderr.includes('no card in Contacts is named "Nobody Here"')]).toEqual([1, true]);
  const sam = await run(["allow", "device_messenger", "sam stranger", "--person", "sam"]);
  expect(sam.code).toBe(0);
  expect(sam.stdout).toContain(`Allowed device_messenger ${STRANGER} as person "sam" (Sam Stranger)`);
  expect(sam.stdout).toMatch(/gw serve \(pid \d+\) reloads the allowlist now/);
  await waitFor(async () => {
    chat.writer.message({ chatGuid: `any;-;${STRANGER}`, from: STRANGER, text: "let me in" });
    const { messages } = await get<Listed>("/messages/unread?limit=100");
    return messages.some((m) => m.text === "let me in") ? true : undefined;
  }, "Sam's next message reaching agents");
});

test("no Contacts folder at all: gw serve runs, senders are their handles, nothing fails", async () => {
  const served = chatDbServeEnv({
    GW_CONTACTS_DIR: join(tempDir(), "no-such-AddressBook"),
    GW_DEVICE_POLL_INTERVAL_MS: "100",
  });
  writeFileSync(served.env.GW_ALLOWLIST_PATH as string, allow(ANN, "ann"));
  const s = spawnGw(["serve"], served.env);
  try {
    await waitForHealth(served.port);
    served.chat.writer.message({ chatGuid: `any;-;${ANN}`, from: ANN, text: "no book" });
    const sender = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${served.port}/messages/unread`, {
        headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "contacts" },
      });
      return ((await res.json()) as Listed).messages.find((m) => m.text === "no book")?.sender;
    }, "the message");
    expect(sender.display_name).toBe(ANN);
  } finally {
    await stopGw(s);
    served.chat.writer.close();
  }
  expect(s.output().stderr).not.toMatch(/"level":(50|60)/);
});
