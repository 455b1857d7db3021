import { describe, expect, test } from "bun:test";
import { normalizeSenderId } from "../../src/allowlist/normalize.ts";
import { identityLinks, parseAllowlist } from "../../src/allowlist/parse.ts";

function parsed(text: string) {
  const r = parseAllowlist(text);
  if (!r.ok) throw new Error(r.problems.join("\n"));
  return r.allowlist;
}

function problems(text: string): string[] {
  const r = parseAllowlist(text);
  if (r.ok) throw new Error("expected problems");
  return r.problems;
}

const VALID = `
[[entry]]
source = "device_messenger"
id = "+1 (555) 555-0100"
person_id = "ann"
display_name = "Ann"

[[entry]]
source = "community_chat"
id = "112233445566778899"
person_id = "ann"

[[entry]]
source = "device_messenger"
id = "Bob.Smith@Example.COM"
person_id = "bob"
`;

describe("valid files", () => {
  test("entries are normalised and looked up by normalised sender id", () => {
    const a = parsed(VALID);
    expect(a.entries).toHaveLength(3);
    expect(a.lookup("device_messenger", "+15555550100")?.person_id).toBe("ann");
    expect(a.lookup("device_messenger", "+1.555.555.0100")?.display_name).toBe("Ann");
    expect(a.lookup("device_messenger", "bob.smith@example.com")?.person_id).toBe("bob");
    expect(a.lookup("device_messenger", "BOB.SMITH@EXAMPLE.COM")?.display_name).toBeNull();
    expect(a.lookup("community_chat", "112233445566778899")?.person_id).toBe("ann");
    expect(a.lookup("community_chat", "+15555550100")).toBeNull();
    expect(a.lookup("device_messenger", "+15555550199")).toBeNull();
  });

  test("identity links are the (person id, source) pairs", () => {
    expect(
      identityLinks(parsed(VALID)).sort((x, y) =>
        `${x.person_id}${x.source}`.localeCompare(`${y.person_id}${y.source}`),
      ),
    ).toEqual([
      { person_id: "ann", source: "community_chat" },
      { person_id: "ann", source: "device_messenger" },
      { person_id: "bob", source: "device_messenger" },
    ]);
  });

  test("a person_id used by only one entry is reported for the warning", () => {
    expect(parsed(VALID).singleUsePersons).toEqual(["bob"]);
  });

  test("an empty file and a file of comments are an empty allowlist", () => {
    expect(parsed("").entries).toEqual([]);
    expect(parsed("# nobody yet\n").entries).toEqual([]);
  });
});

describe("validation names the entry index and field", () => {
  const entry = (body: string) =>
    `[[entry]]\nsource = "device_messenger"\nid = "+15555550100"\nperson_id = "p"\n\n[[entry]]\n${body}\n`;

  test.each([
    [
      'source = "sms"\nid = "x"\nperson_id = "p"',
      'entry 2: field "source" must be one of device_messenger, community_chat',
    ],
    ['id = "x"\nperson_id = "p"', 'entry 2: field "source" must be one of'],
    ['source = "community_chat"\nperson_id = "p"', 'entry 2: field "id" must be a non-empty string'],
    [
      'source = "community_chat"\nid = "  "\nperson_id = "p"',
      'entry 2: field "id" must be a non-empty string',
    ],
    ['source = "community_chat"\nid = 42\nperson_id = "p"', 'entry 2: field "id" must be a non-empty string'],
    ['source = "community_chat"\nid = "x"', 'entry 2: field "person_id" must be a non-empty string'],
    [
      'source = "community_chat"\nid = "x"\nperson_id = ""',
      'entry 2: field "person_id" must be a non-empty string',
    ],
    [
      'source = "community_chat"\nid = "x"\nperson_id = "p"\ndisplay_name = 3',
      'entry 2: field "display_name" must be a non-empty string',
    ],
    [
      'source = "community_chat"\nid = "x"\nperson_id = "p"\nperson = "typo"',
      'entry 2: unknown field "person"',
    ],
    [
      'source = "device_messenger"\nid = "+1 555 555 0100"\nperson_id = "p"',
      'entry 2: field "id" repeats entry 1',
    ],
  ])("%p", (body, expected) => {
    expect(problems(entry(body)).join("\n")).toContain(expected);
  });

  test("invalid TOML says where", () => {
    expect(problems('[[entry]]\nsource = "device_messenger\n')[0]).toMatch(/^not valid TOML at line 2/);
  });

  test("unknown top-level keys and a non-table entry", () => {
    expect(problems('title = "x"\n')).toEqual([
      'unknown top-level key "title" (only [[entry]] tables are read)',
    ]);
    expect(problems('entry = "x"\n')[0]).toContain("[[entry]] tables");
    expect(problems("entry = [1]\n")[0]).toBe("entry 1: must be a table");
  });

  test("every problem is reported, not only the first", () => {
    const p = problems('[[entry]]\nsource = "x"\n[[entry]]\nid = "y"\n');
    expect(p.some((x) => x.startsWith("entry 1:"))).toBe(true);
    expect(p.some((x) => x.startsWith("entry 2:"))).toBe(true);
  });
});

describe("normalizeSenderId", () => {
  test.each([
    ["device_messenger", "+1 (555) 555-0100", "+15555550100"],
    ["device_messenger", "+1.555.555.0100", "+15555550100"],
    ["device_messenger", " +15555550100 ", "+15555550100"],
    ["device_messenger", "Ann@Example.com", "ann@example.com"],
    ["device_messenger", "first.last@example.com", "first.last@example.com"],
    ["community_chat", " 1234567890 ", "1234567890"],
    ["community_chat", "Ann-Name", "Ann-Name"],
  ] as const)("%s %p -> %p", (source, input, out) => {
    expect(normalizeSenderId(source, input)).toBe(out);
  });
});

describe("services (extensions.md §4)", () => {
  const ANN_SMS = `
[[entry]]
source = "device_messenger"
id = "+15555550100"
person_id = "ann"
services = ["iMessage", "sms"]

[[entry]]
source = "device_messenger"
id = "+15555550101"
person_id = "bob"

[[entry]]
source = "community_chat"
id = "112233445566778899"
person_id = "bob"
`;
  test("an entry without services trusts iMessage only; with services, what it lists (any case, spelled canonically)", () => {
    const a = parsed(ANN_SMS);
    expect(a.lookup("device_messenger", "+15555550100")?.services).toEqual(["iMessage", "SMS"]);
    expect(a.admit("device_messenger", "+15555550100", "SMS")?.person_id).toBe("ann");
    expect(a.admit("device_messenger", "+15555550100", "iMessage")?.person_id).toBe("ann");
    expect(a.admit("device_messenger", "+15555550100", "RCS")).toBeNull();
    expect(a.admit("device_messenger", "+15555550101", "iMessage")?.person_id).toBe("bob");
    expect(a.admit("device_messenger", "+15555550101", "SMS")).toBeNull();
    expect(a.admit("device_messenger", "+15555550101", "rcs")).toBeNull();
    // A service no entry can list, or none at all, is never trusted; a stranger is never admitted.
    expect(a.admit("device_messenger", "+15555550101", "iMessageLite")).toBeNull();
    expect(a.admit("device_messenger", "+15555550101", null)).toBeNull();
    expect(a.admit("device_messenger", "+15555550199", "iMessage")).toBeNull();
    // Discord has no services: the entry is enough.
    expect(a.admit("community_chat", "112233445566778899")?.person_id).toBe("bob");
  });
  test("GW_DEVICE_TRUSTED_SERVICES is the default for entries without services, never for those with them", () => {
    const r = parseAllowlist(ANN_SMS, { trustedServices: ["iMessage", "RCS"] });
    if (!r.ok) throw new Error(r.problems.join("; "));
    expect(r.allowlist.admit("device_messenger", "+15555550101", "RCS")?.person_id).toBe("bob");
    const bob = r.allowlist.lookup("device_messenger", "+15555550101");
    expect(bob && r.allowlist.servicesOf(bob)).toEqual(["iMessage", "RCS"]);
    expect(r.allowlist.admit("device_messenger", "+15555550100", "RCS")).toBeNull();
  });
  test("services that are not a list of iMessage, SMS, RCS, or on a Discord entry, are problems naming the entry", () => {
    const entry = (source: string, services: string) =>
      `[[entry]]\nsource = "${source}"\nid = "1"\nperson_id = "p"\nservices = ${services}\n`;
    expect(problems(entry("device_messenger", '["WhatsApp"]'))).toEqual([
      'entry 1: field "services" must be a list of iMessage, SMS, RCS, e.g. services = ["iMessage", "SMS"] ("WhatsApp" is not one of iMessage, SMS, RCS)',
    ]);
    expect(problems(entry("device_messenger", '"SMS"'))[0]).toContain(
      'entry 1: field "services" must be a list',
    );
    expect(problems(entry("device_messenger", "[]"))[0]).toContain("no service is listed");
    expect(problems(entry("community_chat", '["iMessage"]'))).toEqual([
      'entry 1: field "services" applies only to device_messenger entries (iMessage, SMS, RCS)',
    ]);
  });
});
