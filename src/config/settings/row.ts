/**
 * One row of the settings table: the variable, what it does, which faces read it, its default (as the README
 * shows it and as a value) and its parser. `setting` only checks a row's shape; `none` and `value` are the
 * two usual defaults.
 */
import type * as p from "../parsers.ts";
import type { DefaultDirs, HostInfo } from "../paths.ts";

export type Face = "serve" | "receiver" | "mcp" | "service";

export interface Setting<T> {
  env: `GW_${string}`;
  faces: readonly Face[];
  doc: string;
  /** How the default reads in the README. */
  defaultText: string;
  fallback: (dirs: DefaultDirs, host: HostInfo) => T;
  parse: p.Parser<T>;
  /** Never printed: redacted in logs and in `gw doctor`. */
  secret?: boolean;
}

export const setting = <T>(s: Setting<T>) => s;
export const none = () => null;
export const value =
  <T>(v: T) =>
  () =>
    v;
