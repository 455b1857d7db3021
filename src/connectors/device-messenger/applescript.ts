/**
 * AppleScript for sends (pure). Scripts are constants that read every value from `argv`; values are
 * never spliced into script text (decisions.md). `parseOsascriptError` reads the trailing `(-NNNN)` code
 * of osascript's localized error line, and `sendErrorCode` maps it to the error table.
 */
import type { ErrorCode } from "../../core/errors.ts";

export const SEND_TEXT_TO_CHAT = `on run argv
  tell application "Messages" to send (item 1 of argv) to chat id (item 2 of argv)
end run
`;

export const SEND_FILE_TO_CHAT = `on run argv
  tell application "Messages" to send POSIX file (item 1 of argv) to chat id (item 2 of argv)
end run
`;

/** One-to-one fallback when `chat id` is not found (-1728): the first iMessage account's participant. */
export const SEND_TEXT_TO_PARTICIPANT = `on run argv
  tell application "Messages"
    set targetAccount to first account whose service type is iMessage
    send (item 1 of argv) to participant (item 2 of argv) of targetAccount
  end tell
end run
`;

export interface ScriptCall {
  script: string;
  args: string[];
}

/** argv cannot carry NUL characters. */
const clean = (v: string) => v.replaceAll("\0", "");

export const textToChat = (text: string, chatGuid: string): ScriptCall => ({
  script: SEND_TEXT_TO_CHAT,
  args: [clean(text), chatGuid],
});
export const fileToChat = (path: string, chatGuid: string): ScriptCall => ({
  script: SEND_FILE_TO_CHAT,
  args: [path, chatGuid],
});
export const textToParticipant = (text: string, handle: string): ScriptCall => ({
  script: SEND_TEXT_TO_PARTICIPANT,
  args: [clean(text), handle],
});

export function parseOsascriptError(stderr: string): number | null {
  const m = /\((-?\d+)\)\s*$/m.exec(stderr.trim());
  return m ? Number(m[1]) : null;
}

export function sendErrorCode(osaCode: number | null): ErrorCode {
  return osaCode === -1743 ? "PLATFORM_AUTH" : "PLATFORM_SEND_FAILED";
}
