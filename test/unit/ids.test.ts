import { expect, test } from "bun:test";
import { ATTACHMENT_ID_RE, createIdFactory, MESSAGE_ID_RE } from "../../src/core/ids.ts";

test("message and attachment ids match the spec's regexes", () => {
  const ids = createIdFactory({ now: () => Date.now() });
  for (let i = 0; i < 100; i++) {
    expect(ids.message()).toMatch(MESSAGE_ID_RE);
    expect(ids.attachment()).toMatch(ATTACHMENT_ID_RE);
  }
  expect(MESSAGE_ID_RE.test("msg_01ARZ3NDEKTSV4RRFFQ69G5FAI")).toBe(false); // I is not Crockford
  expect(MESSAGE_ID_RE.test("msg_01arz3ndektsv4rrffq69g5fav")).toBe(false);
  expect(ATTACHMENT_ID_RE.test("msg_01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBe(false);
});

test("ids are strictly increasing within one millisecond and across a clock step back", () => {
  let now = 1_800_000_000_000;
  const ids = createIdFactory({ now: () => now });
  const made: string[] = [];
  for (let i = 0; i < 5000; i++) made.push(ids.message().slice(4));
  now -= 10_000;
  for (let i = 0; i < 10; i++) made.push(ids.message().slice(4));
  const sorted = [...made].sort();
  expect(made).toEqual(sorted);
  expect(new Set(made).size).toBe(made.length);
});

test("delivery ids are UUIDv7: valid UUIDs, unique, ordered by creation time", () => {
  let now = 1_800_000_000_000;
  const ids = createIdFactory({ now: () => now });
  const made: string[] = [];
  for (let i = 0; i < 1000; i++) {
    if (i % 100 === 0) now += 1;
    made.push(ids.delivery());
  }
  for (const id of made)
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(new Set(made).size).toBe(made.length);
  expect(made.slice(0, 100).every((id) => id < (made[100] as string))).toBe(true);
  expect(made[0]?.replaceAll("-", "").slice(0, 12)).toBe((1_800_000_000_001).toString(16).padStart(12, "0"));
});
