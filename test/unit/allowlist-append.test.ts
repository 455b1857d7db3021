import { describe, expect, test } from "bun:test";
import { appendEntry, setServices } from "../../src/allowlist/append.ts";
import { parseAllowlist } from "../../src/allowlist/parse.ts";

const FILE = `# who may reach my agents
[[entry]]
source = "device_messenger"   # Ann's phone
id = "+15555550100"
person_id = "ann"
`;
const bob = {
  source: "device_messenger" as const,
  id: "+1 (555) 555-0199",
  personId: "bob",
  displayName: "Bob",
};

describe("appendEntry", () => {
  test("appends after the rest, which stays byte for byte; the id is normalised", () => {
    const r = appendEntry(FILE, bob, "added by test");
    if (!r.ok) throw new Error(r.problem);
    expect(r.text.startsWith(FILE)).toBe(true);
    expect(r.text.slice(FILE.length)).toBe(
      '\n# added by test\n[[entry]]\nsource = "device_messenger"\nid = "+15555550199"\nperson_id = "bob"\ndisplay_name = "Bob"\n',
    );
    expect(r.entry).toEqual({
      source: "device_messenger",
      id: "+15555550199",
      person_id: "bob",
      display_name: "Bob",
    });
    const parsed = parseAllowlist(r.text);
    expect(parsed.ok && parsed.allowlist.entries.map((e) => e.person_id)).toEqual(["ann", "bob"]);
  });

  test("a new file, a file without a final newline, and no display name", () => {
    const fresh = appendEntry("", { ...bob, displayName: null }, "n");
    expect(fresh.ok && fresh.text).toBe(
      '# n\n[[entry]]\nsource = "device_messenger"\nid = "+15555550199"\nperson_id = "bob"\n',
    );
    const noNewline = appendEntry(FILE.trimEnd(), bob, "n");
    expect(noNewline.ok && noNewline.text.startsWith(`${FILE.trimEnd()}\n\n# n\n`)).toBe(true);
  });

  test("hostile names are escaped and read back exactly", () => {
    const name = 'Eve "the\\spy"\n[[entry]]\nsource = "x"';
    const r = appendEntry(
      FILE,
      { source: "community_chat", id: " 112233445566778899 ", personId: "eve", displayName: name },
      "n",
    );
    if (!r.ok) throw new Error(r.problem);
    expect(r.entry).toEqual({
      source: "community_chat",
      id: "112233445566778899",
      person_id: "eve",
      display_name: name.trim(),
    });
    const parsed = parseAllowlist(r.text);
    expect(parsed.ok && parsed.allowlist.entries).toHaveLength(2);
  });

  test.each([
    [
      FILE,
      { ...bob, id: "+15555550100" },
      'device_messenger +15555550100 is already allowed (person_id "ann")',
    ],
    [FILE, { ...bob, id: "  " }, "the sender id is empty"],
    [FILE, { ...bob, personId: " " }, "--person must not be empty"],
    ['[[entry]]\nsource = "fax"\n', bob, "the allowlist does not parse"],
  ])("refused: %#", (text, entry, problem) => {
    const r = appendEntry(text, entry, "n");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problem).toContain(problem);
  });
});

describe("services (gw allow --services)", () => {
  test("a new entry can carry services, written as a TOML list", () => {
    const r = appendEntry(FILE, { ...bob, services: ["iMessage", "SMS"] }, "n");
    if (!r.ok) throw new Error(r.problem);
    expect(r.text.endsWith('display_name = "Bob"\nservices = ["iMessage", "SMS"]\n')).toBe(true);
    expect(r.entry.services).toEqual(["iMessage", "SMS"]);
  });
  test("setServices adds the line to a listed sender's table and changes nothing else", () => {
    const text = `${FILE}\n# Bob\n[[entry]]\nsource = "device_messenger"\nid = "+15555550199"\nperson_id = "bob"\n`;
    const r = setServices(text, {
      source: "device_messenger",
      id: "+1 555 555 0100",
      personId: "ann",
      services: ["iMessage", "SMS"],
    });
    if (!r.ok) throw new Error(r.problem);
    expect(r.text).toBe(
      text.replace('person_id = "ann"\n', 'person_id = "ann"\nservices = ["iMessage", "SMS"]\n'),
    );
    expect(r.entry).toMatchObject({ person_id: "ann", services: ["iMessage", "SMS"] });
    // Again: the one-line services value is replaced in place.
    const back = setServices(r.text, {
      source: "device_messenger",
      id: "+15555550100",
      personId: "ann",
      services: ["iMessage"],
    });
    expect(back.ok && back.text).toBe(
      text.replace('person_id = "ann"\n', 'person_id = "ann"\nservices = ["iMessage"]\n'),
    );
  });
  test("setServices refuses another person, an unlisted sender, a multi-line value and a broken file", () => {
    const s = (text: string, personId = "ann", id = "+15555550100") =>
      setServices(text, { source: "device_messenger", id, personId, services: ["SMS"] });
    expect(s(FILE, "bob")).toEqual({
      ok: false,
      problem: 'device_messenger +15555550100 is already allowed as person "ann", not "bob"',
    });
    expect(s(FILE, "ann", "+15555550199")).toEqual({
      ok: false,
      problem: "device_messenger +15555550199 is not on the allowlist",
    });
    const multi = `${FILE}services = [\n  "iMessage",\n]\n`;
    expect(s(multi)).toMatchObject({ ok: false, problem: expect.stringContaining("several lines") });
    expect(s("[[entry]\n")).toMatchObject({ ok: false, problem: expect.stringContaining("does not parse") });
  });
});
