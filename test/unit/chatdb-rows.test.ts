/** rows.ts's pure readings of a chat.db row: how many attachments a row's text announces. */
import { expect, test } from "bun:test";
import { announcedAttachments } from "../../src/connectors/device-messenger/rows.ts";

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
