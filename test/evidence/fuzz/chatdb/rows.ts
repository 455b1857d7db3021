/**
 * The `chat-db-rows` item: random batches of bad rows written by raw SQL into a chat.db, each followed by
 * one good row, read by the real iMessage connector of a service wired as `gw serve` wires it. The good
 * row must reach GET /messages/unread after every batch (the service's clock moves past the waits for
 * chat joins and attachments), health must stay ok, and nothing may log an error or reject.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { encodeAttributedBody } from "../../../../src/connectors/device-messenger/typedstream.ts";
import { appleNanos } from "../../../../src/demo/chatdb-writer.ts";
import { recordingLogger } from "../../../helpers/logger.ts";
import { waitFor } from "../../../helpers/process.ts";
import { tempDir } from "../../../helpers/temp.ts";
import { AUTH, deviceService } from "../harness.ts";
import type { FuzzItem, Outcome } from "../types.ts";
import { type ChatDb, makeChatDb, refusedBySqlite, type Written, writeBadRow } from "./chat-db.ts";
import { failureLog } from "./failure-log.ts";
import { checkStored, envelopeProblem, show } from "./row-checks.ts";
import { type BadRow, badRowArb, lit, val } from "./row-specs.ts";

/** How long one round may take to show its good row (real time). */
const ROUND_DEADLINE_MS = 10_000;
/**
 * How far the service's clock moves at each look for the good row: past the 10 s wait for a chat join
 * and the 60 s wait for attachments, so rows that wait by design do not cost real time.
 */
const CLOCK_STEP_MS = 61_000;
/** The largest ROWID a JS number holds exactly, less room for the rows written after it. */
const LARGEST_ROWID = 2 ** 53 - 64;

type Message = Record<string, unknown>;

/** History the reader starts after (never imported), with bad rows too; returns how many SQLite took. */
function writeHistory(
  c: ChatDb,
  o: { seed: number; scale: number; now: () => number; dir: string; existing: string },
) {
  const { seed, scale, dir, existing } = o;
  // The tail's newest date is the backfill fence's first mark, and two of them are dated 2293
  // (2^63 - 1 ns) and +Inf.
  const history = [
    ...(fc.sample(badRowArb, { seed: seed + 2, numRuns: 5 * scale }) as BadRow[]),
    ...[val(2n ** 63n - 1n), lit("9e999")].map(
      (date): BadRow => ({
        ...(fc.sample(badRowArb, { seed, numRuns: 1 })[0] as BadRow),
        guid: "uuid",
        date,
      }),
    ),
  ];
  let historyRows = 0;
  for (const row of history) {
    try {
      writeBadRow(c, row, { nowMs: o.now(), dir, existing, n: -1 - historyRows });
      historyRows++;
    } catch (err) {
      if (!refusedBySqlite(err)) throw err;
    }
  }
  return historyRows;
}

/**
 * A chat.db with its history and a service reading it on a clock the rounds move, and the run's failure
 * log (`fail` adds one, `failures` lists them); `stop` removes it all.
 */
async function startRun(scale: number, seed: number) {
  const log = failureLog();
  const dir = tempDir("gw-fuzz-chatdb-");
  const chatDbPath = join(dir, "Library/Messages/chat.db");
  mkdirSync(join(dir, "Library/Messages"), { recursive: true });
  const existing = join(dir, "existing.jpg");
  writeFileSync(existing, "not really a JPEG");
  const c = makeChatDb(chatDbPath);
  const time = { offset: 0 };
  const clock = { now: () => Date.now() + time.offset };
  const logger = recordingLogger();
  const rejections: string[] = [];
  const onRejection = (err: unknown) => void rejections.push(String(err));
  process.on("unhandledRejection", onRejection);
  const historyRows = writeHistory(c, { seed, scale, now: clock.now, dir, existing });
  const s = await deviceService({ dir, chatDbPath, clock, log: logger });
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await s.svc.app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: { ...AUTH, "x-agent-id": "fuzz", "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return { status: res.status, text: await res.text() };
  };
  const stop = async () => {
    process.off("unhandledRejection", onRejection);
    await s.svc.close();
    c.db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const store = s.svc.store.db;
  return {
    seed,
    fail: log.add,
    failures: log.done,
    dir,
    existing,
    c,
    time,
    clock,
    logger,
    rejections,
    request,
    stop,
    historyRows,
    store,
    counts: { rows: 0, refused: 0, stored: 0, withAttachments: 0, rounds: 0 },
    /** How many log entries the rounds so far have looked at. */
    seen: { logged: 0 },
  };
}
type RowsRun = Awaited<ReturnType<typeof startRun>>;

/** Writes a batch of bad rows, counting them and those SQLite's own constraints refused. */
function writeBatch(r: RowsRun, batch: BadRow[]): Written[] {
  const written: Written[] = [];
  for (const row of batch) {
    r.counts.rows++;
    try {
      written.push(
        writeBadRow(r.c, row, { nowMs: r.clock.now(), dir: r.dir, existing: r.existing, n: r.counts.rows }),
      );
    } catch (err) {
      if (!refusedBySqlite(err)) throw err;
      r.counts.refused++; // not a row the reader can see
    }
  }
  return written;
}

/** Writes the friend's good row, its text only in attributedBody, and its chat join. */
function writeGoodRow({ c, clock }: RowsRun, goodText: string): void {
  const good = c.db.run(
    "INSERT INTO message (guid, text, attributedBody, handle_id, service, date, is_from_me) VALUES (?, NULL, ?, ?, 'iMessage', ?, 0)",
    [
      `GOOD-${crypto.randomUUID()}`,
      encodeAttributedBody(goodText),
      c.handles.friend,
      appleNanos(clock.now()),
    ],
  );
  c.db.run("INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (?, ?, 0)", [
    c.chats.friend,
    Number(good.lastInsertRowid),
  ]);
}

/** Moves the service's clock and looks at /messages/unread until the good row is there; that list. */
function awaitGoodRow({ time, request }: RowsRun, goodText: string): Promise<Message[]> {
  return waitFor(
    async () => {
      time.offset += CLOCK_STEP_MS;
      const r = await request("GET", "/messages/unread?limit=100");
      if (r.status !== 200)
        throw new Error(`GET /messages/unread answered ${r.status}: ${r.text.slice(0, 300)}`);
      const list = JSON.parse(r.text).messages as Message[];
      return list.some((m) => m.text === goodText) ? list : undefined;
    },
    "the good row",
    ROUND_DEADLINE_MS,
  );
}

/** Health ok, /messages/quarantine 200, every envelope of both lists well formed. */
async function checkAnswers({ request, fail }: RowsRun, where: string, unread: Message[], batch: BadRow[]) {
  const health = await request("GET", "/healthz");
  const device = health.status === 200 ? JSON.parse(health.text).connectors?.device_messenger : null;
  if (device?.state !== "ok")
    fail(`${where}: /healthz ${health.status} ${health.text.slice(0, 300)}; batch ${show(batch)}`);
  const quarantine = await request("GET", "/messages/quarantine?limit=100");
  if (quarantine.status !== 200)
    fail(
      `${where}: GET /messages/quarantine answered ${quarantine.status}: ${quarantine.text.slice(0, 300)}`,
    );
  const listed = [...unread, ...(quarantine.status === 200 ? JSON.parse(quarantine.text).messages : [])];
  for (const m of listed) {
    const problem = envelopeProblem(m);
    if (problem) fail(`${where}: ${problem}`);
  }
}

/** One batch and its good row; false when the good row never came (later rounds would only repeat it). */
async function round(r: RowsRun, label: string, batch: BadRow[]): Promise<boolean> {
  const { fail, logger } = r;
  r.counts.rounds++;
  const where = `seed ${r.seed}, ${label}`;
  const written = writeBatch(r, batch);
  const goodText = `good row after ${label} 熄灭了 👍🏽`;
  writeGoodRow(r, goodText);
  let unread: Message[];
  try {
    unread = await awaitGoodRow(r, goodText);
  } catch (err) {
    const errors = logger.entries.filter((e) => e.level !== "debug" && e.level !== "info").slice(-3);
    fail(
      `${where}: ${String(err)}; health ${(await r.request("GET", "/healthz")).text}; last log ${show(errors)}; batch ${show(batch)}`,
    );
    return false;
  }
  await checkAnswers(r, where, unread, batch);
  checkStored({ store: r.store, c: r.c, where, fail }, written, r.counts);
  for (const e of logger.entries.slice(r.seen.logged))
    if (e.level === "error") fail(`${where}: logged error ${e.msg} ${show(e.obj)}`);
  r.seen.logged = logger.entries.length;
  for (const x of r.rejections.splice(0)) fail(`${where}: unhandled rejection ${x}`);
  const ids = unread.map((m) => m.id);
  const marked = await r.request("POST", "/messages/mark_read", { message_ids: ids });
  if (marked.status !== 200) fail(`${where}: mark_read answered ${marked.status}`);
  return true;
}

/** The seeded batches, then (unless a round failed) a last round at ROWID 2^53 - 64. */
async function runRounds(r: RowsRun, scale: number): Promise<void> {
  const batches = fc.sample(fc.array(badRowArb, { minLength: 1, maxLength: 8 }), {
    seed: r.seed,
    numRuns: 40 * scale,
  });
  let going = true;
  for (const [i, batch] of batches.entries()) {
    going = await round(r, `round ${i}`, batch);
    if (!going) break;
  }
  if (going) {
    const [last] = fc.sample(badRowArb, { seed: r.seed + 1, numRuns: 1 }) as BadRow[];
    await round(r, "the last round (ROWID 2^53 - 64)", [
      { ...(last as BadRow), guid: "uuid", at: LARGEST_ROWID, chat: { k: "friend" } },
    ]);
  }
}

export const chatDbRows: FuzzItem = {
  id: "chat-db-rows",
  tried:
    "Random batches of 1–8 chat.db rows Messages never writes (Apple's Sequoia schema, raw SQL), each followed by one good row, read by the real iMessage connector of a service wired as gw serve wires it: text NULL/empty/only U+FFFC/lone surrogates/integers/floats/64-bit/blobs/invalid UTF-8/200 KB; attributedBody NULL, random, truncated, header + garbage, text or numbers; dates NULL, 0, negative, ±2^63, ±Inf, ±1e300, text, a blob, seconds, floats, a day ahead, a year back; handle_id 0/NULL/nowhere/garbage id; no chat join, a join to a missing chat, duplicate joins, chats with empty/blob/numeric/20,000-char guids, odd styles and identifiers; attachment joins to missing rows, NULL/blank/relative/`..`/3,000-level/NUL/blob/directory filenames, odd transfer states, hide flags, MIME types and sizes; is_from_me, associated_message_type and item_type out of range or of the wrong type; ROWID jumps up to 2^52 and a last round at 2^53 − 64",
  held: "the good row after every batch reaches GET /messages/unread (the cursor passes every bad row; waits for chat joins and attachments run on the service clock); health is ok after each batch; /messages/unread and /messages/quarantine answer 200 with string ids/texts/channels and RFC 3339 timestamps; a stored bad row's text is its text column or its decoded attributedBody (the text column first when it has visible characters), placeholders dropped; only its own visible attachment rows are re-hosted; no error logged, no unhandled rejection",
  async run({ scale, seed }): Promise<Outcome> {
    const r = await startRun(scale, seed);
    try {
      await runRounds(r, scale);
    } finally {
      await r.stop();
    }
    const { counts, c, historyRows } = r;
    return {
      cases: counts.rows,
      failures: r.failures(),
      notes: [
        `${historyRows} bad rows before the start (not imported; the fence's first mark comes from them)`,
        `${counts.rounds} batches on ${c.full ? "the Sequoia schema of shared/fixtures/chatdb" : "the writer's schema subset (shared fixture absent)"}: ${counts.rows} bad rows, ${counts.refused} refused by SQLite's own constraints (a NULL or duplicate GUID), ${counts.stored} stored (${counts.withAttachments} with a re-hosted attachment), the rest skipped as gw skips them`,
        "ROWIDs above 2^53 are not tried: the reader keeps its cursor as a JS number, so rows there would be unreachable (open)",
      ],
    };
  },
};
