/**
 * The receiver-kill oracle itself: a history the journal promises passes, and each kind of damage (a
 * run twice in one lifetime, an accepted message not run after the restart, a re-run without the
 * interrupted note or a first run with it, a run after one that ended, a message never run to its end,
 * channel order broken) fails with a problem that names it.
 */
import { expect, test } from "bun:test";
import { type AgentRun, judgeReceiverRuns, type PostedMessage } from "./receiver-checks.ts";

// Lifetime 0 accepted a1 (killed mid-run), a2 (queued) and b1 (ran to its end); lifetime 1 re-ran
// a1 and a2 marked interrupted and accepted a3, which it ran; nothing was killed in lifetime 1.
const posted: PostedMessage[] = [
  { text: "a1", channel: "a", lifetime: 0 },
  { text: "b1", channel: "b", lifetime: 0 },
  { text: "a2", channel: "a", lifetime: 0 },
  { text: "a3", channel: "a", lifetime: 1 },
];
const run = (
  text: string,
  lifetime: number,
  t: number,
  ended = true,
  interrupted = lifetime > 0,
): AgentRun => ({
  text,
  channel: text.slice(0, 1),
  lifetime,
  t,
  ended,
  interrupted,
});
const good: AgentRun[] = [
  run("a1", 0, 1, false),
  run("b1", 0, 2),
  run("a1", 1, 10),
  run("a2", 1, 11),
  run("a3", 1, 12, true, false),
];

test("the history the journal promises holds", () => {
  expect(judgeReceiverRuns(posted, good, 2)).toEqual({ accepted: 4, rerun: 2, ended: 4, problems: [] });
});

test.each([
  ["a run twice in one lifetime", [...good, run("a2", 1, 13)], /"a2" ran 2 times in lifetime 1/],
  [
    "an accepted message not run after the restart",
    good.filter((r) => !(r.text === "a2")),
    /"a2" did not run after restart 1/,
  ],
  [
    "a re-run without the interrupted note",
    good.map((r) => (r.text === "a1" && r.lifetime === 1 ? { ...r, interrupted: false } : r)),
    /"a1" in lifetime 1: run again without the interrupted note/,
  ],
  [
    "a first run with the note",
    good.map((r) => (r.text === "b1" ? { ...r, interrupted: true } : r)),
    /"b1" in lifetime 0: marked interrupted on its first run/,
  ],
  [
    "a run after one that ended",
    [...good, run("b1", 1, 14)],
    /"b1" ran again in lifetime 1 after its run had ended/,
  ],
  [
    "a message never run to its end",
    good.map((r) => (r.text === "a3" ? { ...r, ended: false } : r)),
    /"a3" never ran to its end/,
  ],
  [
    "channel order broken",
    good.map((r) => (r.text === "a2" ? { ...r, t: 9 } : r)),
    /lifetime 1, channel a: "a1" started after "a2", accepted later/,
  ],
  ["a run of a message never accepted", [...good, run("a9", 1, 20)], /unknown message "a9"/],
] as const)("%s fails", (_what, runs, problem) => {
  const v = judgeReceiverRuns(posted, runs, 2);
  expect(v.problems.join("\n")).toMatch(problem);
});
