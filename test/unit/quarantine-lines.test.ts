import { expect, test } from "bun:test";
import { parseAllowlist } from "../../src/allowlist/parse.ts";
import { quarantineLines, suggestedPerson, terminalSafe } from "../../src/commands/quarantine.ts";
import type { QuarantinedSender } from "../../src/store/messages.ts";

test("terminalSafe removes control characters, escape sequences and direction overrides", () => {
  expect(terminalSafe("hi\u001b[2J\u001b]0;pwned\u0007 there\r\nnext")).toBe("hi [2J ]0;pwned there next");
  expect(terminalSafe("abc\u202edcba\u2066x\u2069")).toBe("abc dcba x");
  expect(terminalSafe("x".repeat(100), 10)).toBe(`${"x".repeat(9)}…`);
});

test("quarantineLines: per source, counts, first and last seen, preview and the allow line", () => {
  const lines = quarantineLines([
    {
      source: "community_chat",
      sender_id: "998877665544332211",
      sender_name: "mallory",
      channel_id: "community_chat:dm:1",
      count: 1,
      first_ts: Date.UTC(2026, 10, 24, 9),
      last_ts: Date.UTC(2026, 10, 24, 9),
      last_text: "click this\u001b[31m link",
      services: [],
    },
    {
      source: "device_messenger",
      sender_id: "+15555550199",
      sender_name: "+15555550199",
      channel_id: "+15555550199",
      count: 3,
      first_ts: Date.UTC(2026, 10, 20),
      last_ts: Date.UTC(2026, 10, 24, 10),
      last_text: "it's me, let me in",
      services: ["iMessage"],
    },
  ]);
  expect(lines).toEqual([
    "device_messenger:",
    "  +15555550199: 3 messages over iMessage, first 2026-11-20T00:00:00.000Z, last 2026-11-24T10:00:00.000Z",
    "    why: not on the allowlist",
    `    last: "it's me, let me in"`,
    "    allow: gw allow device_messenger '+15555550199' --person person-0199",
    "community_chat:",
    "  998877665544332211 (mallory): 1 message, first 2026-11-24T09:00:00.000Z, last 2026-11-24T09:00:00.000Z",
    "    why: not on the allowlist",
    '    last: "click this [31m link"',
    "    allow: gw allow community_chat '998877665544332211' --person mallory",
  ]);
  expect(quarantineLines([])).toEqual(["No quarantined senders."]);
});

test("quarantineLines: the service of held messages and why; an allowlisted number over SMS gets its --services line", () => {
  const parsed = parseAllowlist(
    '[[entry]]\nsource = "device_messenger"\nid = "+15555550100"\nperson_id = "ann"\n' +
      '[[entry]]\nsource = "device_messenger"\nid = "+15555550101"\nperson_id = "bob"\nservices = ["iMessage", "SMS"]\n',
  );
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  const held = (sender_id: string, services: string[]): QuarantinedSender => ({
    source: "device_messenger",
    sender_id,
    sender_name: sender_id,
    channel_id: sender_id,
    count: 1,
    first_ts: Date.UTC(2026, 10, 24),
    last_ts: Date.UTC(2026, 10, 24),
    last_text: "yes abcde",
    services,
  });
  const lines = quarantineLines(
    [
      held("+15555550100", ["SMS"]),
      held("+15555550101", ["iMessageLite"]),
      held("+15555550102", ["RCS", "iMessage"]),
      held("+15555550101", ["iMessage"]),
    ],
    parsed.allowlist,
  );
  expect(lines.filter((l) => l.startsWith("    why:") || l.startsWith("    allow:"))).toEqual([
    "    why: allowlisted as person ann, but over SMS, which the entry does not trust",
    "    allow: gw allow device_messenger '+15555550100' --person 'ann' --services iMessage,SMS  # SMS and RCS sender ids can be forged: trust them only if you accept that",
    "    why: allowlisted as person bob, but over iMessageLite, which the entry does not trust; iMessageLite can never be trusted",
    "    why: not on the allowlist",
    "    allow: gw allow device_messenger '+15555550102' --person person-0102 --services iMessage,RCS  # SMS and RCS sender ids can be forged: trust them only if you accept that",
    "    why: allowed since as person bob (stored messages keep their status)",
  ]);
  expect(lines[1]).toContain("1 message over SMS, first");
});

test("suggestedPerson: a slug of the name, else person- and the id's last characters; never a shell metacharacter", () => {
  const p = (sender_name: string, sender_id = "+15555550199") => suggestedPerson({ sender_id, sender_name });
  expect(p("Free Nitro 🎁")).toBe("free-nitro");
  expect(p("Ann-Marie O'Neil")).toBe("ann-marie-o-neil");
  expect(p("Zoë")).toBe("zoe");
  expect(p("+15555550199")).toBe("person-0199");
  expect(p("🎁🎁", "998877665544332211")).toBe("person-2211");
  expect(p("<x> | rm -rf ~; $(id)")).toBe("x-rm-rf-id");
});
