/** The README stays true: its configuration table is the settings table, and its two commands are the ones CI runs. */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderConfigTable } from "../../scripts/config-table.ts";

const ROOT = join(import.meta.dir, "../..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

test("the README's configuration table lists every setting with its default", () => {
  expect(readme).toContain(renderConfigTable());
});

test("the README's test command is the one .ci/run runs", () => {
  expect(readme).toContain("bun install && bun test ");
  expect(readFileSync(join(ROOT, ".ci/run"), "utf8")).toContain("bun test");
});

test("the README's MCP setup is the one `gw mcp --help` prints", async () => {
  const { MCP_SETUP } = await import("../../src/mcp/setup-help.ts");
  expect(readme).toContain(MCP_SETUP);
});
