import { expect, test } from "bun:test";
import { REDACTED, redactKeys, secretScrubber } from "../../src/log/redact.ts";

test("values under secret-looking keys are redacted at any depth", () => {
  const out = redactKeys({
    token: "a",
    headers: { Authorization: "Bearer x", "x-gw-signature": "sha256=ff", accept: "json" },
    nested: [{ GW_WEBHOOK_SECRET: "s", ok: 1 }],
    botToken: "b",
    empty_token: null,
  });
  expect(out).toEqual({
    token: REDACTED,
    headers: { Authorization: REDACTED, "x-gw-signature": REDACTED, accept: "json" },
    nested: [{ GW_WEBHOOK_SECRET: REDACTED, ok: 1 }],
    botToken: REDACTED,
    empty_token: null,
  });
});

test("configured secret values are scrubbed wherever they appear, also JSON-escaped", () => {
  const scrub = secretScrubber(['tok"en-123', "abcd1234"]);
  expect(scrub('{"msg":"sent tok\\"en-123 and abcd1234abcd1234"}')).toBe(
    `{"msg":"sent ${REDACTED} and ${REDACTED}${REDACTED}"}`,
  );
  expect(secretScrubber([])("nothing to do")).toBe("nothing to do");
});
