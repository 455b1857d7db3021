/** `gw --help`: every command's name stands apart from its description, in one column. */
import { expect, test } from "bun:test";
import { COMMANDS, mainHelp } from "../../src/commands/help.ts";

test("each command row is the name, at least two spaces, then the description, all in one column", () => {
  const lines = mainHelp().split("\n");
  const rows = Object.entries(COMMANDS).map(([name, text]) => {
    const line = lines.find((l) => l.startsWith(`  ${name} `));
    expect(line, name).toBeDefined();
    expect(line).toMatch(new RegExp(`^  ${name} {2,}\\S`));
    return (line as string).indexOf(text);
  });
  expect(new Set(rows).size).toBe(1);
});
