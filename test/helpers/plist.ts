/**
 * A small XML property-list reader for tests, written from the XML 1.0 and plist 1.0 rules rather than
 * from the builder under test: XML declaration, DOCTYPE, <plist>, and the value elements plists use
 * (dict, key, string, array, integer, true, false), with the five named entities and numeric character
 * references. Everything else (a bare `&` or `<` in text, an unknown element, a mismatched or unclosed
 * tag, a duplicate dict key, text between elements, characters XML cannot carry) is an error, so a
 * builder that forgets to escape is caught here.
 */
export type Plist = string | number | boolean | Plist[] | { [key: string]: Plist };

const NAMED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

export function parsePlist(xml: string): Plist {
  for (let i = 0; i < xml.length; i++) {
    const c = xml.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0xfffe || c === 0xffff)
      throw new Error(`plist: character U+${c.toString(16).padStart(4, "0")} at ${i} is not allowed in XML`);
  }
  const r = new Reader(xml);
  if (r.rest().startsWith("<?xml")) r.skipPast("?>");
  r.space();
  if (r.rest().startsWith("<!DOCTYPE")) r.skipPast(">");
  r.space();
  const open = r.openTag();
  if (open.name !== "plist" || open.selfClosing) throw new Error("plist: the root element is not <plist>");
  const value = r.value();
  r.space();
  r.closeTag("plist");
  r.space();
  if (r.rest() !== "")
    throw new Error(`plist: content after </plist>: ${JSON.stringify(r.rest().slice(0, 20))}`);
  return value;
}

class Reader {
  private i = 0;
  constructor(private readonly s: string) {}

  rest(): string {
    return this.s.slice(this.i);
  }

  space(): void {
    while (this.i < this.s.length && " \t\r\n".includes(this.s[this.i] as string)) this.i++;
  }

  skipPast(end: string): void {
    const at = this.s.indexOf(end, this.i);
    if (at === -1) throw new Error(`plist: ${end} not found`);
    this.i = at + end.length;
  }

  openTag(): { name: string; selfClosing: boolean } {
    const m = /^<([A-Za-z][A-Za-z0-9]*)((?:\s+[A-Za-z]+="[^"<&]*")*)\s*(\/?)>/.exec(this.rest());
    if (!m)
      throw new Error(`plist: expected an element at ${this.i}: ${JSON.stringify(this.rest().slice(0, 30))}`);
    this.i += m[0].length;
    return { name: m[1] as string, selfClosing: m[3] === "/" };
  }

  closeTag(name: string): void {
    const tag = `</${name}>`;
    if (!this.rest().startsWith(tag))
      throw new Error(`plist: expected ${tag} at ${this.i}: ${JSON.stringify(this.rest().slice(0, 30))}`);
    this.i += tag.length;
  }

  /** Character data up to the next `<`, with references decoded; a bare `&` is an error. */
  text(): string {
    let out = "";
    while (this.i < this.s.length && this.s[this.i] !== "<") {
      const ch = this.s[this.i] as string;
      if (ch === "&") {
        const m = /^&(?:([a-z]+)|#([0-9]+)|#x([0-9a-fA-F]+));/.exec(this.rest());
        if (!m) throw new Error(`plist: a bare & at ${this.i}`);
        if (m[1] !== undefined) {
          const named = NAMED[m[1]];
          if (named === undefined) throw new Error(`plist: unknown entity &${m[1]};`);
          out += named;
        } else
          out += String.fromCodePoint(
            m[2] !== undefined ? Number(m[2]) : Number.parseInt(m[3] as string, 16),
          );
        this.i += m[0].length;
      } else {
        out += ch;
        this.i++;
      }
    }
    return out.replaceAll("\r\n", "\n").replaceAll("\r", "\n");
  }

  /** Text that must be only whitespace (between elements). */
  gap(): void {
    const t = this.text();
    if (t.trim() !== "") throw new Error(`plist: text between elements: ${JSON.stringify(t)}`);
  }

  /** The children of an open element, up to its end tag `</name>`: `each` reads one; only space between. */
  children(name: string, each: () => void): void {
    for (;;) {
      this.gap();
      if (this.rest().startsWith(`</${name}>`)) break;
      each();
    }
    this.closeTag(name);
  }

  value(): Plist {
    this.gap();
    const { name, selfClosing } = this.openTag();
    switch (name) {
      case "true":
      case "false":
        if (!selfClosing) throw new Error(`plist: <${name}> must be empty (<${name}/>)`);
        return name === "true";
      case "string": {
        if (selfClosing) return "";
        const t = this.text();
        this.closeTag("string");
        return t;
      }
      case "integer": {
        const t = this.text();
        this.closeTag("integer");
        if (!/^[+-]?\d+$/.test(t.trim())) throw new Error(`plist: <integer>${t}</integer> is not an integer`);
        return Number(t);
      }
      case "array": {
        const items: Plist[] = [];
        if (!selfClosing) this.children("array", () => items.push(this.value()));
        return items;
      }
      case "dict": {
        const dict: { [key: string]: Plist } = {};
        if (!selfClosing)
          this.children("dict", () => {
            const k = this.openTag();
            if (k.name !== "key" || k.selfClosing)
              throw new Error(`plist: expected <key> in a dict, got <${k.name}>`);
            const key = this.text();
            this.closeTag("key");
            if (Object.hasOwn(dict, key)) throw new Error(`plist: duplicate key ${JSON.stringify(key)}`);
            Object.defineProperty(dict, key, {
              value: this.value(),
              enumerable: true,
              writable: true,
              configurable: true,
            });
          });
        return dict;
      }
      default:
        throw new Error(`plist: unsupported element <${name}>`);
    }
  }
}
