/** What gw posts to Discord: splitting long text, nonces, mentions and replies. */
import { describe, expect, test } from "bun:test";
import {
  MAX_MESSAGE_UNITS,
  messageBodies,
  nonceFor,
  splitText,
} from "../../src/connectors/community-chat/outgoing.ts";

const squeeze = (s: string) => s.replace(/\s+/g, "");

describe("splitText", () => {
  test("text up to 2,000 UTF-16 units is one part, unchanged", () => {
    const text = "a".repeat(MAX_MESSAGE_UNITS);
    expect(splitText(text)).toEqual([text]);
    expect(splitText("hi\n\nthere")).toEqual(["hi\n\nthere"]);
  });

  test("longer text breaks at the last line break that fits", () => {
    const first = `${"a".repeat(1200)}\n${"b".repeat(700)}`;
    const second = "c".repeat(500);
    expect(splitText(`${first}\n${second}`)).toEqual([first, second]);
  });

  test("without a line break it breaks at the last whitespace", () => {
    const words = Array.from({ length: 600 }, (_, i) => `w${i}`).join(" ");
    const parts = splitText(words);
    expect(parts.length).toBe(2);
    expect(parts.every((p) => p.length <= MAX_MESSAGE_UNITS && !p.startsWith(" ") && !p.endsWith(" "))).toBe(
      true,
    );
    expect(parts.join(" ")).toBe(words);
  });

  test("one unbroken word is cut hard, never inside a surrogate pair", () => {
    const text = `${"x".repeat(MAX_MESSAGE_UNITS - 1)}😀${"y".repeat(10)}`;
    const parts = splitText(text);
    expect(parts).toEqual(["x".repeat(MAX_MESSAGE_UNITS - 1), `😀${"y".repeat(10)}`]);
    expect(parts.join("")).toBe(text);
  });

  test("whitespace-only parts are not sent", () => {
    const parts = splitText(`${"a".repeat(1999)}\n${" ".repeat(2500)}\nend`);
    expect(parts.map((p) => p.trim())).toEqual(["a".repeat(1999), "end"]);
  });

  test.each([1, 7, 42, 1234])("random text (seed %i): every part fits, no text is lost", (seed) => {
    let x = seed;
    const rnd = () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x / 2 ** 31;
    };
    const alphabet = ["a", "b", " ", "\n", "é", "😀", "\t", "word"];
    const text = Array.from({ length: 3000 }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join("");
    const parts = splitText(text, 300);
    expect(parts.every((p) => p.length <= 300 && p.trim() !== "")).toBe(true);
    expect(squeeze(parts.join(""))).toBe(squeeze(text));
    expect(parts.join("").includes("\ud83d\ud83d")).toBe(false);
  });
});

describe("messageBodies", () => {
  test("one part: content, nonce, no pings, reply reference that never fails the send", () => {
    expect(messageBodies("msg_01", "hi @everyone", "1300000000000000009")).toEqual([
      {
        content: "hi @everyone",
        nonce: nonceFor("msg_01", 0),
        enforce_nonce: true,
        allowed_mentions: { parse: [] },
        message_reference: { message_id: "1300000000000000009", fail_if_not_exists: false },
      },
    ]);
  });

  test("several parts: only the first replies; each has its own stable nonce of at most 25 characters", () => {
    const text = `${"a".repeat(1500)}\n${"b".repeat(1500)}\n${"c".repeat(1500)}`;
    const bodies = messageBodies("msg_02", text, "1300000000000000009");
    expect(bodies.map((b) => b.content)).toEqual(["a".repeat(1500), "b".repeat(1500), "c".repeat(1500)]);
    expect(bodies.map((b) => "message_reference" in b)).toEqual([true, false, false]);
    const nonces = bodies.map((b) => b.nonce);
    expect(new Set(nonces).size).toBe(3);
    expect(nonces.every((n) => n.length === 25)).toBe(true);
    expect(messageBodies("msg_02", text, null).map((b) => b.nonce)).toEqual(nonces);
    expect(messageBodies("msg_03", text, null)[0]?.nonce).not.toBe(nonces[0]);
  });
});
