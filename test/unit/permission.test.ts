import { describe, expect, test } from "bun:test";
import { createPendingRequests, PENDING_TTL_MS, promptText, replyOf } from "../../src/mcp/permission.ts";

describe("replyOf", () => {
  test.each([
    ["yes abcde", "abcde", "allow"],
    ["y abcde", "abcde", "allow"],
    ["  YES   ABCDE  ", "abcde", "allow"],
    ["no abcde", "abcde", "deny"],
    ["N zyxwv", "zyxwv", "deny"],
  ] as const)("%p answers %s: %s", (text, requestId, behavior) => {
    expect(replyOf(text)).toEqual({ requestId, behavior });
  });

  test.each([
    "yes",
    "yes abcd",
    "yes abcdef",
    "yes abcle", // Claude Code's ids never hold an l
    "yes abc1e",
    "sure abcde",
    "yes abcde please",
    "ok yes abcde",
    "yes\nabcde\nno",
    "",
  ])("%p is no answer", (text) => {
    expect(replyOf(text)).toBeNull();
  });
});

describe("promptText", () => {
  const req = {
    request_id: "abcde",
    tool_name: "Bash",
    description: "Run the tests",
    input_preview: "bun test",
  };

  test("names the tool, shows the input and says how to answer", () => {
    expect(promptText(req)).toBe(
      'Claude wants to use Bash: Run the tests\nbun test\nReply "yes abcde" or "no abcde".',
    );
  });

  test("cuts the input at 400 characters (whole code points) and leaves out an empty one", () => {
    const long = promptText({ ...req, input_preview: "😀".repeat(500) });
    expect(long.split("\n")[1]).toBe(`${"😀".repeat(400)}…`);
    expect(promptText({ ...req, input_preview: "  " }).split("\n")).toHaveLength(2);
  });
});

describe("pending requests", () => {
  test("the first answer from a channel the prompt went to counts, once; others and late ones do not", () => {
    let now = 0;
    const p = createPendingRequests(() => now);
    p.add("abcde", ["dm-1", "dm-2"]);
    p.add("fghij", ["dm-1"]);
    expect(p.settle("abcde", "dm-3")).toBe(false);
    expect(p.settle("zzzzz", "dm-1")).toBe(false);
    expect(p.settle("abcde", "dm-2")).toBe(true);
    expect(p.settle("abcde", "dm-1")).toBe(false);
    now = PENDING_TTL_MS;
    expect(p.settle("fghij", "dm-1")).toBe(false);
    expect(p.size()).toBe(0);
  });
});
