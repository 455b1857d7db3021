/**
 * Platform SDKs stay inside their connector (architecture habit 2): discord.js is imported by exactly
 * one file, and that file is loaded only when the Discord connector starts (a dynamic import), so a
 * gw without a bot token never pays for discord.js. SQL stays in src/store/ (plus the iMessage reader of
 * chat.db, the Contacts reader and the demo's writers), and nothing outside the store reaches its raw
 * database handle. The benchmarks' kit runs one way: bench/ may use test/helpers/process.ts, never the
 * reverse, and src/ uses neither.
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
  expect(dynamic.map((s) => s.file)).toEqual(["src/connectors/community-chat/link-keeper.ts"]);
});

test("bun:sqlite is imported only by the store, the iMessage and Contacts readers and the demo", () => {
  const importers = sources
    .filter((s) => /from\s+["']bun:sqlite["']|import\(\s*["']bun:sqlite["']\s*\)/.test(s.text))
    .map((s) => s.file)
    .filter(
      (f) =>
        !f.startsWith("src/store/") &&
        !f.startsWith("src/demo/") &&
        f !== "src/connectors/device-messenger/chat-db.ts" &&
        f !== "src/contacts/reader.ts",
    );
  expect(importers).toEqual([]);
});

test("no module outside src/store/ reaches the store's raw database handle", () => {
  const reaching = sources.filter((s) => !s.file.startsWith("src/store/") && /\bstore\.db\b/.test(s.text));
  expect(reaching.map((s) => s.file)).toEqual([]);
});

test("src/ imports nothing of test/ or bench/, and test/helpers/ nothing of bench/ (the kit's one direction)", () => {
  const reaching = (glob: string, forbidden: RegExp) =>
    [...new Bun.Glob(glob).scanSync({ cwd: ROOT })].filter((f) =>
      forbidden.test(readFileSync(join(ROOT, f), "utf8")),
    );
  expect(reaching("src/**/*.ts", /from\s+["'](?:\.\.\/)+(?:test|bench)\//)).toEqual([]);
  expect(reaching("test/helpers/**/*.ts", /from\s+["'](?:\.\.\/)+bench\//)).toEqual([]);
});
