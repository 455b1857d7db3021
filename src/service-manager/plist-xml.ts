/**
 * XML property lists (pure): a value tree of dicts, arrays, strings, integers and booleans written as
 * Apple's plist 1.0 XML. Every key and string is escaped (&, <, >). What XML 1.0 cannot carry (control
 * characters other than tab, U+FFFE/U+FFFF, unpaired surrogates) is refused, and so are line breaks,
 * which an XML reader would normalise. Dict keys keep their insertion order.
 */
import { hasControlChar } from "./control-chars.ts";
import { ServiceError } from "./errors.ts";

export type PlistValue =
  | string
  | number
  | boolean
  | readonly PlistValue[]
  | { readonly [key: string]: PlistValue };

const HEAD = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
`;

// Beyond control characters, XML 1.0 cannot carry U+FFFE, U+FFFF or a lone surrogate.
const UNWRITABLE = /[\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function renderPlist(root: PlistValue): string {
  return `${HEAD}${node(root, 0, "the top level")}\n</plist>\n`;
}

/** `s` with the three characters that could end or open markup replaced by entities. */
export function escapeXml(s: string, where: string): string {
  if (hasControlChar(s, { allowTab: true }) || UNWRITABLE.test(s))
    throw new ServiceError(
      `gw service: ${where} cannot be written into a property list: it contains a line break or another control character`,
    );
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function node(v: PlistValue, depth: number, where: string): string {
  const pad = "\t".repeat(depth);
  if (typeof v === "string") return `${pad}<string>${escapeXml(v, where)}</string>`;
  if (typeof v === "boolean") return `${pad}<${v}/>`;
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) throw new ServiceError(`gw service: ${where} is not a whole number (${v})`);
    return `${pad}<integer>${v}</integer>`;
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return `${pad}<array/>`;
    const items = v.map((item, i) => node(item, depth + 1, `${where}[${i}]`));
    return `${pad}<array>\n${items.join("\n")}\n${pad}</array>`;
  }
  const entries = Object.entries(v as { readonly [key: string]: PlistValue });
  if (entries.length === 0) return `${pad}<dict/>`;
  const rows = entries.map(
    ([k, item]) =>
      `${pad}\t<key>${escapeXml(k, `the key ${JSON.stringify(k)}`)}</key>\n${node(item, depth + 1, k)}`,
  );
  return `${pad}<dict>\n${rows.join("\n")}\n${pad}</dict>`;
}
