/**
 * Renders the README's configuration table from the settings table in src/config/settings.ts, so
 * the two cannot drift apart (test/unit/readme.test.ts compares them). `bun run scripts/config-table.ts`
 * prints it for pasting.
 */
import { SETTINGS } from "../src/config/settings.ts";

export function renderConfigTable(): string {
  const rows = Object.values(SETTINGS).map(
    (s) => `| \`${s.env}\` | ${s.faces.join(", ")} | ${s.defaultText} | ${s.doc} |`,
  );
  return ["| Variable | Used by | Default | Meaning |", "|---|---|---|---|", ...rows].join("\n");
}

if (import.meta.main) process.stdout.write(`${renderConfigTable()}\n`);
