/**
 * The fake agent (test/fakes/fake-agent.ts) as a program a receiver can run: a wrapper script to pass as
 * GW_RECEIVER_AGENT_BIN and the records the agent appends, one JSON line per event. For the receiver
 * tests and the chaos runs; imports nothing of bun:test.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./process.ts";

export interface AgentRecord {
  event: "start" | "end" | "grandchild" | "tools" | "ignored-term";
  t: number;
  pid: number;
  /** The receiver that started the run (start records). */
  ppid?: number;
  argv?: string[];
  env?: Record<string, string>;
  stdin?: string;
  cwd?: string;
  pgid?: number;
  mcpConfig?: {
    mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }>;
  };
  mcpConfigMode?: number;
  child?: number;
  [k: string]: unknown;
}

/** The wrapper script used as GW_RECEIVER_AGENT_BIN, and the agent's records. */
export function fakeAgentProgram(dir: string) {
  const bin = join(dir, "agent");
  const record = join(dir, "agent-record.jsonl");
  writeFileSync(
    bin,
    `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, "test/fakes/fake-agent.ts")}' '${record}' "$@"\n`,
  );
  chmodSync(bin, 0o755);
  // Only lines ended by a newline are read: an agent may be in the middle of appending the last one.
  const records = (): AgentRecord[] =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .slice(0, -1)
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as AgentRecord)
      : [];
  return { bin, record, records };
}
