import { expect, test } from "bun:test";
import { quarantineLines, terminalSafe } from "../../src/commands/quarantine.ts";

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
    },
  ]);
  expect(lines).toEqual([
    "device_messenger:",
    "  +15555550199: 3 messages, first 2026-11-20T00:00:00.000Z, last 2026-11-24T10:00:00.000Z",
    `    last: "it's me, let me in"`,
    "    allow: gw allow device_messenger '+15555550199' --person <name>",
    "community_chat:",
    "  998877665544332211 (mallory): 1 message, first 2026-11-24T09:00:00.000Z, last 2026-11-24T09:00:00.000Z",
    '    last: "click this [31m link"',
    "    allow: gw allow community_chat '998877665544332211' --person <name>",
  ]);
  expect(quarantineLines([])).toEqual(["No quarantined senders."]);
});
