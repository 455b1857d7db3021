/**
 * `gw receiver` keeps what it accepted, as a real process: after kill -9 with one run going and jobs
 * queued in two channels (all answered 204), no agent outlives it, and the next `gw receiver` on the
 * same journal runs every accepted delivery, in per-channel order, each once, with the interrupted
 * note in the preamble; a redelivery of one of them afterwards runs nothing. The 204 waits for the
 * journal's commit (a writer holding the journal's lock holds the answer back), and the journal,
 * its -wal and -shm are 0600 in a 0700 folder.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import { CHECK_CONTEXT } from "../../src/receiver/agent-command.ts";
import { signedHeaders } from "../../src/webhooks/sign.ts";
import { killAfterEach } from "../helpers/gw-processes.ts";
import { freePort, isAlive, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import {
  type AgentRecord,
  envelopeOf,
  fakeAgentProgram,
  hangingAndQueued,
  RESTART_CHANNELS,
} from "../helpers/receiver.ts";
import { tempDir } from "../helpers/temp.ts";

const SECRET = "journal-secret-0123456789abcdef";
const { A, B } = RESTART_CHANNELS;

const procs = killAfterEach();

function world() {
  const dir = tempDir();
  const agent = fakeAgentProgram(dir);
  const port = freePort();
  const dbPath = join(dir, "data/receiver/receiver.db");
  const env = {
    HOME: dir,
    GW_BEARER_TOKEN: "journal-token-0123456789abcdef",
    GW_WEBHOOK_SECRET: SECRET,
    GW_LOG_DIR: join(dir, "logs"),
    GW_LOG_STDERR_LEVEL: "warn",
    GW_RECEIVER_BIND_PORT: String(port),
    GW_RECEIVER_AGENT_BIN: agent.bin,
    GW_RECEIVER_DB_PATH: dbPath,
  };
  const start = async () => {
    const p = spawnGw(["receiver"], env);
    procs.push(p);
    await waitForHealth(port);
    return p;
  };
  const deliver = (envelope: Envelope, deliveryId: string) => {
    const body = JSON.stringify(envelope);
    return fetch(`http://127.0.0.1:${port}/webhook`, {
      method: "POST",
      headers: { ...signedHeaders(SECRET, deliveryId, Math.floor(Date.now() / 1000), body) },
      body,
    });
  };
  return { dir, agent, dbPath, start, deliver };
}

const bodyOf = (r: AgentRecord) => JSON.parse((r.stdin as string).slice((r.stdin as string).indexOf("{")));
const preambleOf = (r: AgentRecord) => (r.stdin as string).slice(0, (r.stdin as string).indexOf("{"));

test("kill -9 after the 204s: the next gw receiver runs every accepted delivery, in channel order, once, marked interrupted", async () => {
  const w = world();
  const first = await w.start();
  const { sent, ids } = hangingAndQueued();
  for (const [channel, text] of sent) {
    const id = ids.get(text) as string;
    expect((await w.deliver(envelopeOf({ channel_id: channel, text }), id)).status).toBe(204);
  }
  await waitFor(
    () => (w.agent.records().filter((r) => r.event === "grandchild").length === 2 ? true : undefined),
    "both hanging runs and their grandchildren",
  );
  const before = w.agent.records();
  const pids = before.flatMap((r) => (r.event === "grandchild" ? [r.pid, r.child as number] : []));
  expect(
    before
      .filter((r) => r.event === "start")
      .map((r) => bodyOf(r).text)
      .sort(),
  ).toEqual(["hang-once a1", "hang-once b1"]);

  first.proc.kill("SIGKILL");
  await first.exited;
  await waitFor(
    () => (pids.every((p) => !isAlive(p)) ? true : undefined),
    "no agent outliving the kill",
    3_000,
  );

  const second = await w.start();
  const runs = await waitFor(
    () => {
      const rs = w.agent.records().slice(before.length);
      return rs.filter((r) => r.event === "end").length === 5 ? rs : undefined;
    },
    "the five accepted deliveries to run after the restart",
    30_000,
  );
  const starts = runs.filter((r) => r.event === "start");
  expect(starts.every((r) => r.ppid === second.proc.pid)).toBe(true);
  expect(starts.filter((r) => bodyOf(r).channel_id === A).map((r) => bodyOf(r).text)).toEqual([
    "hang-once a1",
    "a2",
    "a3",
  ]);
  expect(starts.filter((r) => bodyOf(r).channel_id === B).map((r) => bodyOf(r).text)).toEqual([
    "hang-once b1",
    "b2",
  ]);
  for (const r of starts) {
    expect(preambleOf(r)).toContain(`delivery ${ids.get(bodyOf(r).text)}`);
    expect(preambleOf(r)).toContain("interrupted");
    expect(preambleOf(r)).toContain(CHECK_CONTEXT);
  }

  // A redelivery of an id the journal holds runs nothing: the fresh delivery behind it in the same
  // channel is the next run.
  expect((await w.deliver(envelopeOf({ channel_id: A, text: "a2" }), ids.get("a2") as string)).status).toBe(
    204,
  );
  expect((await w.deliver(envelopeOf({ channel_id: A, text: "a4" }), crypto.randomUUID())).status).toBe(204);
  const after = await waitFor(() => {
    const rs = w.agent.records().slice(before.length);
    return rs.filter((r) => r.event === "end").length === 6 ? rs : undefined;
  }, "the fresh run");
  const afterStarts = after.filter((r) => r.event === "start");
  expect(afterStarts).toHaveLength(6);
  expect(afterStarts.filter((r) => bodyOf(r).channel_id === A).map((r) => bodyOf(r).text)).toEqual([
    "hang-once a1",
    "a2",
    "a3",
    "a4",
  ]);

  second.proc.kill("SIGTERM");
  expect(await second.exited).toBe(0);
  const journal = new Database(w.dbPath, { readonly: true });
  expect(journal.query("SELECT COUNT(*) AS n FROM receiver_jobs WHERE finished_at IS NULL").get()).toEqual({
    n: 0,
  });
  journal.close();
}, 60_000);

test("the 204 waits for the journal's commit; the journal is 0600 (with -wal and -shm) in a 0700 folder", async () => {
  const w = world();
  const receiver = await w.start();
  const locker = new Database(w.dbPath);
  const row = locker.query<{ n: number }, [string]>(
    "SELECT COUNT(*) AS n FROM receiver_jobs WHERE delivery_id = ?1",
  );
  locker.run("BEGIN IMMEDIATE");
  const id = crypto.randomUUID();
  const answer = w.deliver(envelopeOf({ text: "while locked" }), id);
  // While another writer holds the journal, the receiver cannot commit, so it must not answer. Absence
  // can only be shown over a bounded time: 500 ms, well inside the receiver's 5 s busy timeout.
  const early = await Promise.race([answer.then(() => "answered"), Bun.sleep(500).then(() => "held back")]);
  expect(early).toBe("held back");
  expect(row.get(id)).toEqual({ n: 0 });
  locker.run("COMMIT");
  expect((await answer).status).toBe(204);
  expect(row.get(id)).toEqual({ n: 1 });
  locker.close();

  const mode = (p: string) => statSync(p).mode & 0o777;
  expect(mode(join(w.dbPath, ".."))).toBe(0o700);
  for (const f of [w.dbPath, `${w.dbPath}-wal`, `${w.dbPath}-shm`]) expect([f, mode(f)]).toEqual([f, 0o600]);
  receiver.proc.kill("SIGTERM");
  expect(await receiver.exited).toBe(0);
}, 30_000);
