/**
 * The state database's disk full (reliability.md F6), on a real `gw serve` reading a chat.db, pushing
 * webhooks and sending through the Messages stand-in: the process's file-size limit drops to 0 bytes
 * (rlimit.ts), so every write to gw.db, its WAL and the log file fails, then comes back. While full:
 * writing requests answer the error envelope with 500 INTERNAL_ERROR at once (a send the platform took
 * but gw cannot record: 502 outcome unknown, recorded later), reads and /healthz still
 * answer, new chat.db rows are not stored and the cursor does not pass them, and a webhook attempt that
 * cannot be recorded is not repeated. After: the rows are stored within one poll, exactly once, the
 * attempt is recorded, everything acknowledged before is still there, and integrity_check is ok.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { faultReceiver } from "../../fakes/fault-receiver.ts";
import { ROOT } from "../../helpers/process.ts";
import { chatDbFile } from "./chatdb-files.ts";
import { entry, FRIEND, type Gw, ms, startGw, storedCount, unread, waitFor, workDir } from "./harness.ts";
import { fileSizeLimiter } from "./rlimit.ts";
import { type FaultRun, row } from "./types.ts";

export const POLL_MS = 200;
export const FULL_FOR_MS = 1_500;
/** "Within one poll" of space returning, with room for the tick's own work on a busy machine. */
export const RESUME_WITHIN_MS = POLL_MS + 300;
const ROWS_WHILE_FULL = 3;

interface Answer {
  status: number;
  code: string | null;
  /** details.outcome of an error envelope, when it has one. */
  outcome: string | null;
  ms: number;
}

export interface DiskFullDetails {
  skipped: string | null;
  how: string;
  whileFull: {
    markRead: Answer;
    sendWithKey: Answer;
    sendWithoutKey: Answer;
    unreadStatus: number;
    healthStatus: number;
    cursorHeld: boolean;
    webhookHits: number;
    webhookMaxPerDelivery: number;
    alive: boolean;
  };
  after: {
    resumeMs: number;
    storedOnce: number;
    acknowledgedKept: boolean;
    readMarkKept: boolean;
    sendWithKeyRetried: number;
    /** Platform calls for the keyed send: 1 means none was made while full (the retry after made it). */
    keyedPlatformCalls: number;
    webhookRecorded: string;
    webhookCountsMatch: boolean;
    webhookHits: number;
    echoStored: boolean;
    logKept: boolean;
    integrity: string;
    exitCode: number;
  };
}

const answer = (r: { status: number; ms: number; body: Record<string, unknown> | null }): Answer => {
  const error = r.body?.error as { code?: string; details?: { outcome?: string } } | undefined;
  return { status: r.status, ms: r.ms, code: error?.code ?? null, outcome: error?.details?.outcome ?? null };
};

/**
 * The Messages stand-in as GW_OSASCRIPT_PATH (it writes the sent row into chat.db as Messages would).
 * It is another program: it lifts the file-size limit it inherits from gw, so only gw's disk is full.
 */
function standIn(dir: string, chatDb: string): Record<string, string> {
  const program = join(dir, "osascript");
  writeFileSync(
    program,
    `#!/bin/sh\nulimit -f unlimited 2>/dev/null\nexec '${process.execPath}' '${join(ROOT, "src/main.ts")}' __messages-standin "$@"\n`,
  );
  chmodSync(program, 0o755);
  return { GW_OSASCRIPT_PATH: program, GW_STANDIN_CHAT_DB: chatDb, GW_STANDIN_LOG: join(dir, "standin.log") };
}

export async function diskFullFaults(): Promise<FaultRun<DiskFullDetails>> {
  const limiter = fileSizeLimiter();
  if ("unavailable" in limiter) {
    const reason = `not run here: ${limiter.unavailable}`;
    return {
      rows: [{ tried: "disk full on the state database", times: 0, held: reason, ok: true }],
      notes: [],
      details: { skipped: reason } as DiskFullDetails,
    };
  }
  const work = workDir("disk-full");
  const chat = chatDbFile(work.dir);
  let reply = 503;
  const receiver = faultReceiver(() => ({ status: reply }));
  let gw: Gw | null = null;
  let limited = false;
  try {
    const env = {
      GW_CHAT_DB_PATH: chat.path,
      GW_DEVICE_POLL_INTERVAL_MS: String(POLL_MS),
      GW_WEBHOOK_URL: receiver.url,
      GW_WEBHOOK_SECRET: "faults-disk-secret-0123456789",
      GW_WEBHOOK_RETRY_DELAYS_MS: "400,400,400,400",
      GW_WEBHOOK_TIMEOUT_MS: "1000",
      ...standIn(work.dir, chat.path),
    };
    gw = await startGw({ dir: work.dir, env, allowlist: entry("device_messenger", FRIEND, "ann") });
    const live = gw;
    const count = (text: string) => storedCount(live, text);
    const cursor = () =>
      Number(
        live.db(
          (db) => (db.query("SELECT position FROM connector_cursors").get() as { position: string }).position,
        ),
      );
    const stored = (text: string) => waitFor(() => (count(text) > 0 ? true : undefined), `"${text}" stored`);

    // Before: messages stored and acknowledged, one read mark, one send answered 200, one delivery pending.
    for (const text of ["before 1", "before 2"]) chat.say(text);
    await stored("before 2");
    const [first, second] = await unread(live);
    const marked = await live.post("/messages/mark_read", { message_ids: [first?.id] });
    const sent = await live.post(
      "/messages/send",
      { channel_id: FRIEND, text: "sent before" },
      { "idempotency-key": "k-before" },
    );
    if (marked.status !== 200 || sent.status !== 200)
      throw new Error(`setup: mark_read ${marked.status}, send ${sent.status}`);
    const sentId = (sent.body as { message_id: string }).message_id;
    await waitFor(() => (receiver.hits.length >= 2 ? true : undefined), "both deliveries tried (503)");

    // Every row chat.db holds read first, the send's echo (written by the stand-in) included: stored
    // after this line but before the limit, it moved the cursor and failed "cursor held" once in ten runs.
    const lastRow = chat.maxRowid();
    await waitFor(() => (cursor() >= lastRow ? true : undefined), "the cursor at chat.db's last row");
    // Full: no byte can be written to any file; the receiver now accepts.
    const cursorBefore = cursor();
    limiter.limit(live.pid, 0);
    limited = true;
    reply = 204;
    const fullAt = performance.now();
    const fullSince = Date.now();
    for (let i = 1; i <= ROWS_WHILE_FULL; i++) chat.say(`while full ${i}`);
    const markRead = answer(await live.post("/messages/mark_read", { message_ids: [second?.id] }));
    const sendWithKey = answer(
      await live.post(
        "/messages/send",
        { channel_id: FRIEND, text: "keyed while full" },
        { "idempotency-key": "k-full" },
      ),
    );
    const sendWithoutKey = answer(
      await live.post("/messages/send", { channel_id: FRIEND, text: "unkeyed while full" }),
    );
    const unreadStatus = (await live.get("/messages/unread")).status;
    const healthStatus = (await live.health()).status;
    let cursorHeld = true;
    while (performance.now() - fullAt < FULL_FOR_MS) {
      if (cursor() !== cursorBefore) cursorHeld = false;
      await Bun.sleep(50);
    }
    const fullHits = receiver.hits.filter((h) => h.start >= fullSince);
    const perDelivery = new Map<string, number>();
    for (const h of fullHits)
      perDelivery.set(h.deliveryId ?? "", (perDelivery.get(h.deliveryId ?? "") ?? 0) + 1);
    const alive = live.proc.proc.exitCode === null;

    // Space returns.
    limiter.restore(live.pid);
    limited = false;
    const back = performance.now();
    await waitFor(
      () => (count(`while full ${ROWS_WHILE_FULL}`) > 0 ? true : undefined),
      "the rows written while full",
      10_000,
    );
    const resumeMs = performance.now() - back;
    const retried = await live.post(
      "/messages/send",
      { channel_id: FRIEND, text: "keyed while full" },
      { "idempotency-key": "k-full" },
    );
    await waitFor(
      () =>
        live.db(
          (db) =>
            (
              db.query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get() as {
                n: number;
              }
            ).n,
        ) === 0
          ? true
          : undefined,
      "every delivery settled",
    );
    const deliveries = live.db(
      (db) =>
        db
          .query(
            "SELECT d.id, d.status, d.attempt_count, m.text FROM webhook_deliveries d JOIN messages m ON m.id = d.message_id",
          )
          .all() as { id: string; status: string; attempt_count: number; text: string }[],
    );
    const early = deliveries.filter((d) => d.text.startsWith("before"));
    await waitFor(() => (count("unkeyed while full") > 0 ? true : undefined), "the echo of the unkeyed send");
    const stillUnread = new Set((await unread(live)).map((m) => m.id));
    const integrity = live.db(
      (db) => (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check,
    );
    const texts = [
      "before 1",
      "before 2",
      ...Array.from({ length: ROWS_WHILE_FULL }, (_, i) => `while full ${i + 1}`),
    ];
    const storedOnce = texts.filter((t) => count(t) === 1).length;
    const acknowledgedKept = live.db(
      (db) => db.query("SELECT 1 FROM messages WHERE id = ?1").get(sentId) !== null,
    );
    const logFile = join(live.env.GW_LOG_DIR as string, "current.log");
    // What reached the platform: the stand-in logs each call's argv (text, then chat).
    const platformCalls = readFileSync(live.env.GW_STANDIN_LOG as string, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { argv?: string[] }).argv?.at(-2) ?? "");
    const keyedCalls = platformCalls.filter((t) => t === "keyed while full").length;
    const exitCode = await live.stop();
    const log = readFileSync(logFile, "utf8");
    const details: DiskFullDetails = {
      skipped: null,
      how: limiter.how,
      whileFull: {
        markRead,
        sendWithKey,
        sendWithoutKey,
        unreadStatus,
        healthStatus,
        cursorHeld,
        webhookHits: fullHits.length,
        webhookMaxPerDelivery: Math.max(0, ...perDelivery.values()),
        alive,
      },
      after: {
        resumeMs,
        storedOnce,
        acknowledgedKept,
        readMarkKept: !stillUnread.has(first?.id as string),
        sendWithKeyRetried: retried.status,
        keyedPlatformCalls: keyedCalls,
        webhookRecorded: early.map((d) => `${d.status} after ${d.attempt_count}`).join(", "),
        webhookCountsMatch: deliveries.every(
          (d) =>
            d.status === "delivered" &&
            d.attempt_count === receiver.hits.filter((h) => h.deliveryId === d.id).length,
        ),
        webhookHits: receiver.hits.length,
        echoStored: count("unkeyed while full") === 1,
        logKept: log.includes("reading chat.db failed") && log.includes('"msg":"stopped"'),
        integrity,
        exitCode,
      },
    };
    return { rows: rowsOf(details, texts.length), notes: notesOf(details), details };
  } finally {
    if (gw && limited) limiter.restore(gw.pid);
    await gw?.stop();
    receiver.stop();
    work.remove();
  }
}

function rowsOf(d: DiskFullDetails, texts: number) {
  const w = d.whileFull;
  const a = d.after;
  const is500 = (x: Answer) => x.status === 500 && x.code === "INTERNAL_ERROR" && x.ms < 2_000;
  const unknownOutcome = (x: Answer) =>
    x.status === 502 && x.code === "PLATFORM_SEND_FAILED" && x.outcome === "unknown" && x.ms < 2_000;
  return [
    row(
      `disk full on the state database (${FULL_FOR_MS} ms): writing requests`,
      3,
      `mark_read ${w.markRead.status} ${w.markRead.code} in ${ms(w.markRead.ms)}; send with an Idempotency-Key ${w.sendWithKey.status} ${w.sendWithKey.code} in ${ms(w.sendWithKey.ms)} before any platform call (the same key answered ${a.sendWithKeyRetried} once space returned); send without a key ${w.sendWithoutKey.status} ${w.sendWithoutKey.code} outcome ${w.sendWithoutKey.outcome} in ${ms(w.sendWithoutKey.ms)} (the platform took it; recorded once space returned, never sent again); GET /messages/unread ${w.unreadStatus}, /healthz ${w.healthStatus}; gw serve kept running`,
      {
        "500 INTERNAL_ERROR at once": is500(w.markRead) && is500(w.sendWithKey),
        "an accepted send answers 502 outcome unknown at once": unknownOutcome(w.sendWithoutKey),
        "reads answered": w.unreadStatus === 200 && w.healthStatus === 200,
        "no crash": w.alive,
        "the key not poisoned": a.sendWithKeyRetried === 200,
        "no platform call for the keyed send while full": a.keyedPlatformCalls === 1,
      },
    ),
    row(
      `disk full on the state database: ${ROWS_WHILE_FULL} chat.db rows arrive meanwhile`,
      ROWS_WHILE_FULL,
      `the cursor never moved while full; stored ${ms(a.resumeMs)} after space returned (poll ${POLL_MS} ms); ${a.storedOnce} of ${texts} messages stored exactly once`,
      {
        "cursor held": w.cursorHeld,
        [`stored within ${RESUME_WITHIN_MS} ms`]: a.resumeMs < RESUME_WITHIN_MS,
        "each once": a.storedOnce === texts,
      },
    ),
    row(
      "disk full on the state database: a webhook attempt that cannot be recorded",
      w.webhookHits,
      `${w.webhookHits} attempt(s) while full, at most ${w.webhookMaxPerDelivery} per delivery (no loop); recorded once space returned (${a.webhookRecorded}); every delivery's attempt count equals the requests the receiver saw (${a.webhookHits} in all)`,
      {
        "no repeat while full": w.webhookMaxPerDelivery <= 1,
        "recorded, none posted twice": a.webhookCountsMatch,
      },
    ),
    row(
      "disk full on the state database: nothing acknowledged lost",
      1,
      `the send answered 200 before is stored; the read mark is kept; the unkeyed send made while full was recorded once (with its chat.db echo); log lines written while full reached the log file; integrity_check ${a.integrity}; exit ${a.exitCode}`,
      {
        "acknowledged kept": a.acknowledgedKept && a.readMarkKept,
        "echo stored": a.echoStored,
        "log kept": a.logKept,
        "integrity ok": a.integrity === "ok",
        "clean exit": a.exitCode === 0,
      },
    ),
  ];
}

function notesOf(d: DiskFullDetails): string[] {
  return [
    `Disk full: gw serve's file-size limit (RLIMIT_FSIZE) set to 0 bytes and back with ${d.how}, so writes fail with EFBIG (SQLite: SQLITE_IOERR_WRITE) where a full disk gives ENOSPC (SQLITE_FULL); both are write failures that roll the transaction back. No root, mount or loop device is needed; on other systems the run says it was skipped. A send without an Idempotency-Key while full reaches the platform before gw fails to record it: it answers 502 PLATFORM_SEND_FAILED with outcome "unknown", and gw records it once space returns (never sending it again); a keyed send is refused before the platform call, since its key cannot be taken.`,
  ];
}
