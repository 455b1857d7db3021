import { describe, expect, test } from "bun:test";
import { canonicalTimestamp, formatTimestamp, parseTimestamp } from "../../src/core/time.ts";

const EMITTED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("formatTimestamp", () => {
  test("always YYYY-MM-DDTHH:MM:SS.mmmZ", () => {
    for (const ms of [0, 1, 999, Date.UTC(2026, 10, 22, 5, 6, 7, 8), 4102444800000]) {
      expect(formatTimestamp(ms)).toMatch(EMITTED);
    }
    expect(formatTimestamp(Date.UTC(2026, 0, 2, 3, 4, 5, 6))).toBe("2026-01-02T03:04:05.006Z");
  });
});

describe("parseTimestamp accepts any RFC 3339 form", () => {
  const at = Date.UTC(2026, 10, 22, 10, 30, 0, 0);
  test.each([
    ["2026-11-22T10:30:00Z", at],
    ["2026-11-22T10:30:00z", at],
    ["2026-11-22t10:30:00Z", at],
    ["2026-11-22 10:30:00Z", at],
    ["2026-11-22T10:30:00.000Z", at],
    ["2026-11-22T10:30:00.5Z", at + 500],
    ["2026-11-22T10:30:00.123456789Z", at + 123],
    ["2026-11-22T12:30:00+02:00", at],
    ["2026-11-22T05:00:00-05:30", at],
    ["2026-11-22T10:30:00+00:00", at],
    ["2026-11-22T10:30:00-00:00", at],
    ["2026-11-23T00:00:00+13:30", at],
    ["2026-12-31T23:59:60Z", Date.UTC(2026, 11, 31, 23, 59, 59, 999)],
  ])("%s", (input, expected) => {
    expect(parseTimestamp(input)).toBe(expected);
  });

  test.each([
    "",
    "2026-11-22",
    "2026-11-22T10:30Z",
    "2026-11-22T10:30:00",
    "2026-11-22T10:30:00+0200",
    "2026-11-22T10:30:00.Z",
    "2026-13-01T00:00:00Z",
    "2026-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-11-22T24:00:00Z",
    "2026-11-22T10:60:00Z",
    "2026-11-22T10:30:00+24:00",
    "1700000000",
    " 2026-11-22T10:30:00Z",
    "2026-11-22T10:30:00Z ",
  ])("rejects %p", (input) => {
    expect(parseTimestamp(input)).toBeNull();
  });

  test("leap day in a leap year", () => {
    expect(parseTimestamp("2028-02-29T00:00:00Z")).toBe(Date.UTC(2028, 1, 29));
  });

  test("canonical form of an offset input", () => {
    expect(canonicalTimestamp("2026-11-22T12:30:00.1+02:00")).toBe("2026-11-22T10:30:00.100Z");
    expect(canonicalTimestamp("nope")).toBeNull();
  });

  test("round trip of every emitted form", () => {
    for (let i = 0; i < 200; i++) {
      const ms = Math.floor(Math.random() * 4102444800000);
      expect(parseTimestamp(formatTimestamp(ms))).toBe(ms);
    }
  });
});
