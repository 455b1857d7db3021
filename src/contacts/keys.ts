/**
 * What a phone number or an e-mail address is filed under in the contact book (pure). A phone number is
 * its E.164 form, parsed by libphonenumber-js with its `min` metadata (country codes, national prefixes
 * and possible lengths: all that E.164 needs; `max` adds only digit patterns for validity and number
 * types); one written without a country code is read in the region given. A number that is not a
 * possible phone number (a short code, a local number without its area code) is filed under its digits,
 * with its `+` if it had one, so the same string in a card and in a handle still meet. An e-mail
 * address is trimmed and lower-cased. Regions are ISO 3166 alpha-2 codes libphonenumber knows, any case.
 */
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from "libphonenumber-js/min";

/** The code in upper case when libphonenumber knows it as a region, else null. */
export function regionCode(value: string | null | undefined): CountryCode | null {
  const v = value?.trim().toUpperCase() ?? "";
  return /^[A-Z]{2}$/.test(v) && isSupportedCountry(v) ? v : null;
}

/** The first candidate that is a known region. */
export function firstRegion(...candidates: readonly (string | null | undefined)[]): CountryCode | null {
  for (const c of candidates) {
    const r = regionCode(c);
    if (r !== null) return r;
  }
  return null;
}

/**
 * A locale's region (`en-GB` → GB); a locale that names none gets its likely one (`en` → US), as
 * Intl.Locale#maximize says. Null when that is no region libphonenumber knows.
 */
export function regionOfLocale(locale: string): CountryCode | null {
  try {
    const l = new Intl.Locale(locale);
    return regionCode(l.region ?? l.maximize().region);
  } catch {
    return null;
  }
}

const DIALABLE = /^[+\d\s().\-/]+$/;

/** A phone number's key: E.164, else its digits (see the header); null when it has no digits. */
export function phoneKey(raw: string, region: CountryCode | null): string | null {
  const text = raw.trim();
  if (text === "") return null;
  const parsed = parsePhoneNumberFromString(text, region ?? undefined);
  if (parsed?.isPossible()) return parsed.number;
  if (!DIALABLE.test(text)) return null;
  const digits = text.replace(/\D/g, "");
  if (digits === "") return null;
  return text.startsWith("+") ? `+${digits}` : digits;
}

/** An e-mail address's key: trimmed, lower case; null unless it has an `@` between two parts. */
export function emailKey(raw: string): string | null {
  const v = raw.trim().toLowerCase();
  return /^[^@\s]+@[^@\s]+$/.test(v) ? v : null;
}

/** A Messages handle's key: an e-mail address if it has an `@`, else a phone number. */
export function handleKey(handle: string, region: CountryCode | null): string | null {
  return handle.includes("@") ? emailKey(handle) : phoneKey(handle, region);
}
