/**
 * Which Messages services an allowlist entry trusts (extensions.md §4), pure. A Messages row's service is
 * its `message.service`: `iMessage`, `SMS`, `RCS` in their canonical spelling whatever the case, anything
 * else as written (`iMessageLite`, null). SMS sender ids can be forged and RCS is not end-to-end
 * authenticated, so an entry trusts what its `services` lists, else the default (GW_DEVICE_TRUSTED_SERVICES,
 * `iMessage`); a service no entry can list (null, iMessageLite...) is never trusted.
 */

import type { Envelope } from "../core/envelope.ts";

export const DEVICE_SERVICES = ["iMessage", "SMS", "RCS"] as const;
export type DeviceService = (typeof DEVICE_SERVICES)[number];

/** What gw trusts when nothing says otherwise. */
export const DEFAULT_TRUSTED_SERVICES: readonly DeviceService[] = ["iMessage"];

/** Services whose sender ids prove nothing: an entry trusting one is worth a warning. */
export const FORGEABLE_SERVICES: readonly DeviceService[] = ["SMS", "RCS"];

/** The canonical name of a listed service (any case), or null for anything else. */
export function deviceService(name: string): DeviceService | null {
  const lower = name.trim().toLowerCase();
  return DEVICE_SERVICES.find((s) => s.toLowerCase() === lower) ?? null;
}

/** A row's service as compared: canonical when it is one of DEVICE_SERVICES, else as written. */
export function serviceOf(written: string | null | undefined): string | null {
  if (written === null || written === undefined) return null;
  return deviceService(written) ?? written;
}

/** Whether a message over `service` is admitted by an entry trusting `trusted`. */
export function trustsService(
  trusted: readonly DeviceService[],
  service: string | null | undefined,
): boolean {
  const s = serviceOf(service);
  return s !== null && (trusted as readonly string[]).includes(s);
}

/**
 * Parses a list of services (comma-separated or an array's items): every word one of DEVICE_SERVICES, at
 * least one, duplicates dropped. The problem names the offending word.
 */
export function parseServices(
  words: readonly unknown[],
): { ok: true; services: DeviceService[] } | { ok: false; problem: string } {
  const out: DeviceService[] = [];
  for (const w of words) {
    const s = typeof w === "string" ? deviceService(w) : null;
    if (s === null)
      return { ok: false, problem: `${JSON.stringify(w)} is not one of ${DEVICE_SERVICES.join(", ")}` };
    if (!out.includes(s)) out.push(s);
  }
  return out.length === 0 ? { ok: false, problem: "no service is listed" } : { ok: true, services: out };
}

/**
 * Whether a message came over a platform that authenticates its sender: Discord, or iMessage itself. An
 * SMS or RCS from an allowlisted number never counts as a permission verdict or a phone command, whatever
 * the allowlist trusts (extensions §4).
 */
export const authenticated = (m: Pick<Envelope, "source" | "raw">): boolean =>
  m.source === "community_chat" || serviceOf(String(m.raw.service ?? "")) === "iMessage";
