/**
 * The search query builder (src/store/search-query.ts): words only, FTS5 syntax always plain text, and
 * every expression it builds parses in a real FTS5 table and matches what the words say.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  bodyWord,
  channelTag,
  ftsString,
  matchExpression,
  rankExpression,
  searchWords,
  sourceTag,
} from "../../src/store/search-query.ts";

describe("searchWords", () => {
  test.each([
    ["hello world", ["hello", "world"]],
    ["  hello\t\nworld  ", ["hello", "world"]],
    ['"quoted phrase"', ["quoted", "phrase"]],
    ["pre*", ["pre"]],
    ["-excluded", ["excluded"]],
    ["^start", ["start"]],
    ["body:secret", ["body", "secret"]],
    ["tags:cAB", ["tags", "cAB"]],
    ["(a OR b)", ["a", "OR", "b"]],
    ["x AND y NOT z", ["x", "AND", "y", "NOT", "z"]],
    ["NEAR(a b, 2)", ["NEAR", "a", "b", "2"]],
    ["a + b {c} [d] 'e'", ["a", "b", "c", "d", "e"]],
    ["don't", ["don", "t"]],
    ["e-mail", ["e", "mail"]],
    ["3.14", ["3", "14"]],
    ["C++ c#", ["C"]],
    ["日本語のテキスト", ["日本語のテキスト"]],
    ["привет, мир!", ["привет", "мир"]],
    ["हिन्दी भाषा", ["हिन्दी", "भाषा"]],
    ["naïve café", ["naïve", "café"]],
    ["emoji 😀 here", ["emoji", "here"]],
    ["a\u0000b\u0007c\u001bd", ["a", "b", "c", "d"]],
  ])("%j -> %j", (q, words) => {
    expect(searchWords(q)).toEqual(words);
  });

  test.each(["", "   ", "***", '""', "-", "^", ":", "()", "😀🎉", "\u0301", "\u0000\u001f", "--- *** ^^^"])(
    "%j has no words",
    (q) => {
      expect(searchWords(q)).toEqual([]);
    },
  );

  test("duplicates by case or accent count once, first spelling kept", () => {
    expect(searchWords("Hello hello HELLO héllo world")).toEqual(["Hello", "world"]);
  });

  test("decomposed accents are composed (NFC) and stay in their word", () => {
    expect(searchWords("cafe\u0301")).toEqual(["café"]);
  });
});

describe("expressions", () => {
  test("an FTS5 string doubles its quotes", () => {
    expect(ftsString("a")).toBe('"a"');
    expect(ftsString('say "hi"')).toBe('"say ""hi"""');
    expect(ftsString("")).toBe('""');
  });

  test("words are AND-ed strings of the body column; filters add tag tokens", () => {
    expect(bodyWord("OR")).toBe('body : "OR"');
    expect(matchExpression(["a", "NOT"], { source: null, channelId: null })).toBe(
      'body : "a" AND body : "NOT"',
    );
    expect(matchExpression(["a"], { source: "community_chat", channelId: "+1555" })).toBe(
      `body : "a" AND tags : "${channelTag("+1555")}" AND tags : "${sourceTag("community_chat")}"`,
    );
    expect(matchExpression([], { source: "community_chat", channelId: null })).toBe("");
    expect(rankExpression([])).toBe("");
    expect(rankExpression(["x", "y"])).toBe('body : "x" AND body : "y"');
  });

  test("tags are one hex token of the UTF-8 bytes, as SQLite's hex() writes them", () => {
    const db = new Database(":memory:");
    for (const id of ["+15555550100", "community_chat:dm:77", "chat;+;guid", "日本", ""]) {
      const { h } = db.query("SELECT 'c' || hex(?1) AS h").get(id) as { h: string };
      expect(channelTag(id)).toBe(h);
    }
    expect(sourceTag("device_messenger")).toMatch(/^s[0-9A-F]+$/);
  });
});

describe("in a real FTS5 table", () => {
  const db = new Database(":memory:");
  db.run(
    "CREATE VIRTUAL TABLE message_search USING fts5(body, tags, tokenize = 'unicode61 remove_diacritics 2')",
  );
  const docs = [
    "plain words here",
    'he said "OR" and NOT near NEAR',
    "naive cafe in Zürich",
    "привет мир",
    "हिन्दी भाषा",
    "body tags secret",
  ];
  for (const [i, body] of docs.entries())
    db.query("INSERT INTO message_search (rowid, body, tags) VALUES (?1, ?2, ?3)").run(
      i + 1,
      body,
      `${channelTag(`ch${i % 2}`)} ${sourceTag("device_messenger")}`,
    );
  const found = (q: string, channelId: string | null = null) =>
    (
      db
        .query("SELECT rowid AS r FROM message_search WHERE message_search MATCH ?1 ORDER BY rowid")
        .all(matchExpression(searchWords(q), { source: null, channelId })) as { r: number }[]
    ).map((x) => x.r);

  test.each([
    ["words", [1]],
    ['"or" not', [2]],
    ["NEAR(near)", [2]],
    ["NAÏVE CAFÉ zurich", [3]],
    ["МИР", [4]],
    ["भाषा", [5]],
    ["tags:secret", [6]],
    ["body:words", []],
    ["plain* -here", [1]],
    ["plai", []],
  ])("%j finds %j", (q, rows) => {
    expect(found(q)).toEqual(rows);
  });

  test("a channel filter narrows to that channel's tag", () => {
    expect(found("words", "ch0")).toEqual([1]);
    expect(found("words", "ch1")).toEqual([]);
  });

  test("hostile strings never make FTS5 throw", () => {
    const hostile = [
      '"',
      '""',
      "*",
      "AND",
      "OR OR",
      "NOT",
      "(",
      ")",
      "^",
      ":",
      "NEAR(",
      "a:b:c",
      "\u0000",
      "'",
    ];
    for (const a of hostile)
      for (const b of hostile) {
        const expr = matchExpression(searchWords(`${a}${b} x${a}`), { source: null, channelId: `${a}${b}` });
        expect(() =>
          db.query("SELECT rowid FROM message_search WHERE message_search MATCH ?1").all(expr),
        ).not.toThrow();
      }
  });
});
