/** Control characters (pure): C0 (U+0000–U+001F) and DEL, with tab allowed where a format keeps it. */
export function hasControlChar(s: string, opts: { allowTab: boolean }): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 && !(opts.allowTab && c === 0x09)) || c === 0x7f) return true;
  }
  return false;
}
