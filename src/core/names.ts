/**
 * Who a platform handle is, by the owner's address book (extensions.md §6): the port through which the
 * iMessage connector and the channel list ask for a Contacts name. `nameOf` is synchronous and cheap (a map
 * lookup); `ready` settles once the address book was read the first time (at once when there is none).
 */
export interface Names {
  /** The card's name for a phone number or e-mail address; `region` for a number without a country code. */
  nameOf(handle: string, region?: string | null): string | null;
  ready(): Promise<void>;
}

/** No address book (Contacts off, or off macOS without GW_CONTACTS_DIR). */
export const NO_NAMES: Names = { nameOf: () => null, ready: () => Promise.resolve() };
