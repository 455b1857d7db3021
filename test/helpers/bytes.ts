/**
 * Byte builders the blob tests spell their inputs with: `bytes(0x84, 0x01)`, `utf8("NSString")` and
 * `concat(...)` of the pieces into one fresh Uint8Array (never a view of Node's shared pool).
 */

export const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);
export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
export const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
