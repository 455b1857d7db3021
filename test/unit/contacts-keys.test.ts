/** What a phone number or an e-mail address is filed under (src/contacts/keys.ts), case by case. */
import { describe, expect, test } from "bun:test";
import {
  emailKey,
  firstRegion,
  handleKey,
  phoneKey,
  regionCode,
  regionOfLocale,
} from "../../src/contacts/keys.ts";

describe("phoneKey", () => {
  test.each([
    ["(555) 555-0100", "US", "+15555550100"],
    ["+1 555-555-0100", "US", "+15555550100"],
    ["+1 555-555-0100", null, "+15555550100"],
    ["555.555.0100", "US", "+15555550100"],
    ["555-555-0100", "US", "+15555550100"],
    ["1 (555) 555-0100", "US", "+15555550100"],
    ["+15555550100", "GB", "+15555550100"],
    ["020 7946 0018", "GB", "+442079460018"],
    ["07700 900123", "GB", "+447700900123"],
    ["+44 7700 900123", "US", "+447700900123"],
    ["00 44 20 7946 0018", "FR", "+442079460018"],
    ["tel:+15555550100", null, "+15555550100"],
    ["+1 (555) 555-0100 ext. 12", null, "+15555550100"],
    ["  +1 555 555 0100  ", null, "+15555550100"],
  ])("%p in %p is %p", (raw, region, key) => {
    expect(phoneKey(raw, region as never)).toBe(key);
  });

  test("a national number is read in the region given, so another region gives another number", () => {
    expect(phoneKey("020 7946 0018", "US" as never)).not.toBe("+442079460018");
    expect(phoneKey("(555) 555-0100", "GB" as never)).not.toBe("+15555550100");
  });

  test("a number that is not a possible phone number is filed under its digits", () => {
    expect(phoneKey("12345", "US" as never)).toBe("12345");
    expect(phoneKey("555-0100", "US" as never)).toBe("5550100");
    expect(phoneKey("+12345", null)).toBe("+12345");
    expect(phoneKey("(555) 555-0100", null)).toBe("5555550100");
  });

  test("no digits, or letters that are no phone number: no key", () => {
    expect(phoneKey("", "US" as never)).toBeNull();
    expect(phoneKey("   ", "US" as never)).toBeNull();
    expect(phoneKey("call me", "US" as never)).toBeNull();
    expect(phoneKey("-- ()", "US" as never)).toBeNull();
  });
});

describe("emailKey and handleKey", () => {
  test("e-mail addresses are trimmed and lower-cased", () => {
    expect(emailKey(" Alex.Doe@Example.COM ")).toBe("alex.doe@example.com");
    expect(emailKey("not an address")).toBeNull();
    expect(emailKey("a@b@c")).toBeNull();
  });

  test("a handle with @ is an e-mail address, any other a phone number", () => {
    expect(handleKey("ALEX@example.com", "US" as never)).toBe("alex@example.com");
    expect(handleKey("+15555550100", null)).toBe("+15555550100");
    expect(handleKey("(555) 555-0100", "US" as never)).toBe("+15555550100");
  });
});

describe("regions", () => {
  test("a region is a two-letter code libphonenumber knows, any case", () => {
    expect(regionCode("us")).toBe("US");
    expect(regionCode(" GB ")).toBe("GB");
    expect(regionCode("ZZ")).toBeNull();
    expect(regionCode("USA")).toBeNull();
    expect(regionCode(null)).toBeNull();
    expect(regionCode(undefined)).toBeNull();
  });

  test("the first known region wins", () => {
    expect(firstRegion(null, "xx", "gb", "US")).toBe("GB");
    expect(firstRegion(undefined, null)).toBeNull();
  });

  test("a locale's region, its likely one when it names none", () => {
    expect(regionOfLocale("en-GB")).toBe("GB");
    expect(regionOfLocale("de-CH")).toBe("CH");
    expect(regionOfLocale("fr")).toBe("FR");
    expect(regionOfLocale("en")).toBe("US");
    expect(regionOfLocale("not a locale!")).toBeNull();
  });
});
