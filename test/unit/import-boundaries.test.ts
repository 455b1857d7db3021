/**
 * Platform SDKs stay inside their connector (architecture habit 2): discord.js is imported by exactly
 * one file, and that file is loaded only when the Discord connector starts (a dynamic import), so a
 * gw without a bot token never pays for discord.js. The receiver's journal SQL stays in src/store/.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/process.ts";

const sources = [...new Bun.Glob("src/**/*.ts").scanSync({ cwd: ROOT })].map((f) => ({
  file: f,
  text: readFileSync(join(ROOT, f), "utf8"),
}));

test("only src/connectors/community-chat/discord-link.ts imports discord.js", () => {
  const importers = sources.filter((s) =>
    /from\s+["']discord\.js["']|import\(\s*["']discord\.js["']\s*\)/.test(s.text),
  );
  expect(importers.map((s) => s.file)).toEqual(["src/connectors/community-chat/discord-link.ts"]);
});

test("discord-link.ts is reached only through a dynamic import or type-only imports", () => {
  const staticValueImports = sources.filter((s) =>
    /^import\s+(?!type\b)[^;]*from\s+["']\.\/discord-link\.ts["']/m.test(s.text),
  );
  expect(staticValueImports.map((s) => s.file)).toEqual([]);
  const dynamic = sources.filter((s) => s.text.includes('import("./discord-link.ts")'));
  expect(dynamic.map((s) => s.file)).toEqual(["src/connectors/community-chat/connector.ts"]);
});

test("the receiver keeps its SQL in src/store/: nothing in src/receiver/ or its command imports bun:sqlite", () => {
  const importers = sources.filter(
    (s) =>
      (s.file.startsWith("src/receiver/") || s.file === "src/commands/receiver.ts") &&
      /from\s+["']bun:sqlite["']|import\(\s*["']bun:sqlite["']\s*\)/.test(s.text),
  );
  expect(importers.map((s) => s.file)).toEqual([]);
  expect(sources.find((s) => s.file === "src/store/receiver-journal.ts")?.text).toContain("./open.ts");
});
