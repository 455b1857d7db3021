import { expect, test } from "bun:test";
import { createBearerCheck } from "../../src/http/auth.ts";

const TOKEN = "correct-horse-battery-staple-0123456789";
const check = createBearerCheck(TOKEN);

test("accepts exactly the configured bearer token", () => {
  expect(check(`Bearer ${TOKEN}`)).toBe(true);
  expect(check(`bearer ${TOKEN}`)).toBe(true);
});

test.each([
  null,
  "",
  "Bearer",
  "Bearer ",
  TOKEN,
  `Basic ${TOKEN}`,
  `Bearer ${TOKEN.slice(0, -1)}`,
  `Bearer ${TOKEN}x`,
  `Bearer ${TOKEN.toUpperCase()}`,
  `Bearer  ${TOKEN} extra`,
  `Bearer ${TOKEN}, Bearer ${TOKEN}`,
  `Bearer ${"x".repeat(10_000)}`,
])("refuses %p", (header) => {
  expect(check(header)).toBe(false);
});
