/**
 * The disk-full run again with the errno a full disk really gives: strace attached to `gw serve`
 * injects ENOSPC into every write to gw.db and its WAL (`-P` limits it to those files; SQLite then
 * reports SQLITE_FULL), and detaching ends the fault. Needs strace and the right to trace the process
 * (root, or ptrace allowed); otherwise it says why it did not run. CI has no strace: disk-full.ts (the
 * file-size limit) is the run CI relies on.
 */
import { chatDbFile, serveChatDb } from "./chatdb-files.ts";
import { type Gw, ms, storedCount, waitFor, workDir } from "./harness.ts";
import { type FaultRun, row } from "./types.ts";

export const POLL_MS = 200;
const RESUME_WITHIN_MS = POLL_MS + 300;

export interface EnospcDetails {
  skipped: string | null;
  markRead: { status: number; code: string | null };
  sqliteError: string | null;
  cursorHeld: boolean;
  resumeMs: number;
  storedOnce: boolean;
  integrity: string;
  exitCode: number;
}

export async function diskFullEnospcFaults(): Promise<FaultRun<EnospcDetails>> {
  const skip = (why: string): FaultRun<EnospcDetails> => ({
    rows: [
      {
        tried: "disk full with real ENOSPC (strace -e inject)",
        times: 0,
        held: `not run here: ${why}`,
        ok: true,
      },
    ],
    notes: [],
    details: { skipped: why } as EnospcDetails,
  });
  if (!Bun.which("strace")) return skip("strace is not installed");
  const work = workDir("enospc");
  const chat = chatDbFile(work.dir);
  let gw: Gw | null = null;
  let tracer: ReturnType<typeof Bun.spawn> | null = null;
  try {
    gw = await serveChatDb(work.dir, chat, POLL_MS);
    const live = gw;
    const count = (text: string) => storedCount(live, text);
    const cursor = () =>
      live.db(
        (db) => (db.query("SELECT position FROM connector_cursors").get() as { position: string }).position,
      );
    chat.say("before");
    await waitFor(() => (count("before") === 1 ? true : undefined), "the first row stored");
    const db = live.env.GW_DB_PATH as string;
    const files = [db, `${db}-wal`, `${db}-journal`].flatMap((f) => ["-P", f]);
    const t = Bun.spawn(
      [
        "strace",
        "-f",
        "-p",
        String(live.pid),
        "-o",
        "/dev/null",
        "-e",
        "trace=write,pwrite64,pwritev",
        "-e",
        "inject=write,pwrite64,pwritev:error=ENOSPC",
        ...files,
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    tracer = t;
    let err = "";
    void (async () => {
      for await (const chunk of t.stderr as ReadableStream<Uint8Array>)
        err += new TextDecoder().decode(chunk);
    })();
    const attached = await waitFor(
      () => (/attached/.test(err) ? true : t.exitCode !== null ? false : undefined),
      "strace attached",
      5_000,
    ).catch(() => false);
    if (!attached) return skip(`strace could not attach: ${err.trim().split("\n")[0] ?? "no output"}`);

    const cursorBefore = cursor();
    chat.say("while full");
    const [first] = ((await live.get("/messages/unread")).body?.messages ?? []) as { id: string }[];
    const marked = await live.post("/messages/mark_read", { message_ids: [first?.id] });
    await Bun.sleep(3 * POLL_MS);
    const cursorHeld = cursor() === cursorBefore && count("while full") === 0;
    t.kill("SIGINT");
    await t.exited;
    tracer = null;
    const back = performance.now();
    await waitFor(() => (count("while full") > 0 ? true : undefined), "the row stored after the fault");
    const resumeMs = performance.now() - back;
    const sqliteError =
      live
        .logs()
        .map((l) => String(l.err ?? ""))
        .find((e) => /disk is full|SQLITE_FULL/.test(e)) ?? null;
    const integrity = live.db(
      (d) => (d.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check,
    );
    const storedOnce = count("while full") === 1 && count("before") === 1;
    const exitCode = await live.stop();
    const details: EnospcDetails = {
      skipped: null,
      markRead: {
        status: marked.status,
        code: ((marked.body?.error as { code?: string } | undefined)?.code ?? null) as string | null,
      },
      sqliteError,
      cursorHeld,
      resumeMs,
      storedOnce,
      integrity,
      exitCode,
    };
    return {
      rows: [
        row(
          "disk full with real ENOSPC on gw.db and its WAL (strace -e inject)",
          1,
          `SQLite said "${sqliteError ?? "?"}"; mark_read ${details.markRead.status} ${details.markRead.code}; the cursor held; the row stored ${ms(resumeMs)} after the fault ended, once; integrity_check ${integrity}; exit ${exitCode}`,
          {
            "500 INTERNAL_ERROR":
              details.markRead.status === 500 && details.markRead.code === "INTERNAL_ERROR",
            "cursor held": cursorHeld,
            [`resumed within ${RESUME_WITHIN_MS} ms`]: resumeMs < RESUME_WITHIN_MS,
            "stored once": storedOnce,
            "integrity ok": integrity === "ok",
            "clean exit": exitCode === 0,
          },
        ),
      ],
      notes: [],
      details,
    };
  } finally {
    tracer?.kill("SIGINT");
    await tracer?.exited;
    await gw?.stop();
    work.remove();
  }
}
