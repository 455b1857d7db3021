/**
 * docs/EVIDENCE.md is written by the commands that produce its figures. Each command owns one section
 * between `<!-- evidence:<name>:begin -->` and `<!-- evidence:<name>:end -->` and replaces only that;
 * text outside the markers is left as it is. A missing section is appended at the end.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const EVIDENCE_PATH = join(import.meta.dir, "../../docs/EVIDENCE.md");

const HEADER = `# Evidence

What gw was measured and tried against, with the command that reproduces each figure. The sections
between the generated-section markers are written by those commands; do not edit them by hand.
`;

/** Replaces (or appends) one generated section. Pure. */
export function withSection(doc: string, name: string, body: string): string {
  const begin = `<!-- evidence:${name}:begin -->`;
  const end = `<!-- evidence:${name}:end -->`;
  const block = `${begin}\n${body.trimEnd()}\n${end}`;
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end);
  if (i >= 0 && j > i) return doc.slice(0, i) + block + doc.slice(j + end.length);
  return `${doc.trimEnd()}\n\n${block}\n`;
}

export function writeSection(name: string, body: string, path = EVIDENCE_PATH): void {
  const doc = existsSync(path) ? readFileSync(path, "utf8") : HEADER;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, withSection(doc, name, body));
}

/** A Markdown table; cells have their pipes escaped. Pure. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
  const line = (r: readonly string[]) => `| ${r.map(cell).join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n");
}

/** One row of an evidence table: what was tried, how many times, what held, and whether it all did. */
export interface EvidenceRow {
  tried: string;
  times: number;
  held: string;
  ok: boolean;
}

/**
 * A category's section (crashes, faults, bad input, load): its title, how to reproduce it, where it ran,
 * and one row per thing tried. Pure but for the machine stamp.
 */
export function evidenceSection(o: {
  title: string;
  command: string;
  rows: readonly EvidenceRow[];
  notes?: string[];
  machine: { revision: string; platform: string; cpus: number; cpuModel: string; bun: string };
  wallS: number;
}): string {
  const m = o.machine;
  const failed = o.rows.filter((r) => !r.ok).length;
  return [
    `## ${o.title}`,
    "",
    `\`${o.command}\` — ${m.platform}, ${m.cpus} × ${m.cpuModel}, Bun ${m.bun}; revision ${m.revision}; ${o.wallS} s; ${failed === 0 ? "everything held" : `**${failed} row(s) did not hold**`}.`,
    "",
    table(
      ["what was tried", "times", "what held", "result"],
      o.rows.map((r) => [r.tried, String(r.times), r.held, r.ok ? "held" : "**failed**"]),
    ),
    ...(o.notes && o.notes.length > 0 ? ["", ...o.notes] : []),
  ].join("\n");
}
