/** rows.ts's pure readings of a chat.db row: how many attachments a row's text announces. */
import { expect, test } from "bun:test";
import { announcedAttachments, visibleText } from "../../src/connectors/device-messenger/rows.ts";

test.each([
  [null, 0],
  ["", 0],
  ["no files", 0],
  ["\uFFFC", 1],
  ["\uFFFC\uFFFClook", 2],
  ["a \uFFFC b \uFFFC c \uFFFC", 3],
  ["😀\uFFFC👍🏽\uFFFC", 2],
])("announcedAttachments(%p) is %p: one per U+FFFC", (raw, n) => {
  expect(announcedAttachments(raw)).toBe(n);
});

test.each([
  ["test 1\uFFFCtest 2", "test 1\ntest 2"],
  ["\uFFFCtest 1\uFFFCtest 2 \uFFFCtest 3", "test 1\ntest 2 \ntest 3"],
  ["\uFFFC\uFFFClook\uFFFC", "look"],
  ["a\uFFFC\uFFFD\uFFFCb", "a\nb"],
  ["\uFFFC", ""],
  ["plain", "plain"],
  ["", ""],
])("visibleText(%p): placeholders at the ends dropped, a run between two parts a line break", (raw, want) => {
  expect(visibleText(raw)).toBe(want);
});
