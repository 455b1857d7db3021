/**
 * The receiver-kill invariant (reliability.md F2, as the journal makes it), a pure judgement of what
 * was accepted in which receiver lifetime and of the agent runs each lifetime started. Held when: no
 * message runs twice within one lifetime; a message whose run did not end in a lifetime (killed
 * mid-run, or still queued) runs in the very next one, and only such a run carries the interrupted
 * note; no message runs again once a run of it ended; every accepted message's run ends by the last
 * lifetime (the one not killed); within a lifetime each channel's runs start in acceptance order.
 */

export interface PostedMessage {
  /** Unique per message; how runs are matched to messages. */
  text: string;
  channel: string;
  /** Index of the receiver lifetime that accepted it (answered 204). */
  lifetime: number;
}

export interface AgentRun {
  text: string;
  channel: string;
  lifetime: number;
  /** Start time (ms), for the order within a channel. */
  t: number;
  ended: boolean;
  /** The preamble says an earlier run was interrupted. */
  interrupted: boolean;
}

export interface ReceiverVerdict {
  accepted: number;
  /** Runs started in a later lifetime than the message was accepted in. */
  rerun: number;
  /** Messages whose run ended. */
  ended: number;
  problems: string[];
}

export function judgeReceiverRuns(
  posted: readonly PostedMessage[],
  runs: readonly AgentRun[],
  lifetimes: number,
): ReceiverVerdict {
  const problems: string[] = [];
  const byText = new Map<string, AgentRun[]>();
  for (const r of runs) byText.set(r.text, [...(byText.get(r.text) ?? []), r]);
  const postedTexts = new Set(posted.map((m) => m.text));
  for (const r of runs) if (!postedTexts.has(r.text)) problems.push(`a run of unknown message "${r.text}"`);
  let ended = 0;
  let rerun = 0;
  for (const m of posted) {
    const own = byText.get(m.text) ?? [];
    const v = judgeMessage(m, own, lifetimes);
    problems.push(...v.problems);
    if (v.ended) ended += 1;
    rerun += own.filter((r) => r.lifetime > m.lifetime).length;
  }
  problems.push(...orderProblems(posted, runs));
  return { accepted: posted.length, rerun, ended, problems };
}

function judgeMessage(m: PostedMessage, own: readonly AgentRun[], lifetimes: number) {
  const problems: string[] = [];
  const at = (l: number) => own.filter((r) => r.lifetime === l);
  let done = false;
  for (let l = 0; l < lifetimes; l++) {
    const here = at(l);
    if (here.length > 1) problems.push(`"${m.text}" ran ${here.length} times in lifetime ${l}`);
    const run = here[0];
    if (l < m.lifetime) {
      if (run) problems.push(`"${m.text}" ran in lifetime ${l}, before it was accepted`);
      continue;
    }
    if (done) {
      if (run) problems.push(`"${m.text}" ran again in lifetime ${l} after its run had ended`);
      continue;
    }
    if (!run) {
      if (l > m.lifetime) problems.push(`"${m.text}" did not run after restart ${l}`);
      continue;
    }
    if (run.interrupted !== l > m.lifetime)
      problems.push(
        `"${m.text}" in lifetime ${l}: ${run.interrupted ? "marked interrupted on its first run" : "run again without the interrupted note"}`,
      );
    done = run.ended;
  }
  if (!done) problems.push(`"${m.text}" never ran to its end`);
  return { problems, ended: done };
}

function orderProblems(posted: readonly PostedMessage[], runs: readonly AgentRun[]): string[] {
  const rank = new Map(posted.map((m, i) => [m.text, i]));
  const problems: string[] = [];
  const groups = new Map<string, AgentRun[]>();
  for (const r of runs) {
    const k = `${r.lifetime}\u0000${r.channel}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  for (const group of groups.values()) {
    const byStart = [...group].sort((a, b) => a.t - b.t);
    for (let i = 1; i < byStart.length; i++) {
      const [prev, cur] = [byStart[i - 1] as AgentRun, byStart[i] as AgentRun];
      if ((rank.get(prev.text) ?? 0) > (rank.get(cur.text) ?? 0))
        problems.push(
          `lifetime ${cur.lifetime}, channel ${cur.channel}: "${cur.text}" started after "${prev.text}", accepted later`,
        );
    }
  }
  return problems;
}
