/**
 * Diagnostic companion of bench/device.ts: where the backlog time goes. In one process, on a fresh
 * chat.db holding BENCH_BACKLOG rows (the same mix as device.ts: 80 % allowlisted friend, 10 % stranger,
 * 10 % group) and fresh gw.db files:
 *
 *   bun run bench/device-profile.ts
 *
 * read:   the connector's read path in steps: rowsAfter in batches of BATCH_ROWS only; plus one
 *         attachment query per row (the reader before the batched lookup, for comparison); plus one
 *         attachmentsOf query per batch (the reader now); plus attributedBody decoding (bodyText); the
 *         whole poller tick with a no-op ingest (adds classification, normalisation, ids, raw JSON).
 * ingest: the same normalised messages through createIngest over openStore (gw's pragmas), in batches
 *         of BATCH_ROWS as the poller sends them, then with synchronous=OFF (no fsync per commit), then
 *         in batches of BENCH_BIG_BATCH (default 5000) with gw's pragmas.
 * Prints a table and one JSON line. Environment: BENCH_BACKLOG (50000), BENCH_BIG_BATCH (5000).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildAllowlist } from "../src/allowlist/parse.ts";
import { BATCH_ROWS, openChatDb } from "../src/connectors/device-messenger/chat-db.ts";
import { createPoller } from "../src/connectors/device-messenger/poller.ts";
import { bodyText } from "../src/connectors/device-messenger/rows.ts";
import type { Source } from "../src/core/envelope.ts";
import { createIdFactory } from "../src/core/ids.ts";
import { type Logger, systemClock } from "../src/core/ports.ts";
import { openChatDbWriter } from "../src/demo/chatdb-writer.ts";
import { createIngest, type NormalizedMessage } from "../src/ingest/ingest.ts";
import type { CursorRow } from "../src/store/cursors.ts";
import { openStore } from "../src/store/store.ts";

const ROWS = Number(process.env.BENCH_BACKLOG ?? 50_000);
const BIG = Number(process.env.BENCH_BIG_BATCH ?? 5_000);
const FRIEND = "+15555550100";
const STRANGER = "+15555550199";
const FRIEND_CHAT = `any;-;${FRIEND}`;
const STRANGER_CHAT = `any;-;${STRANGER}`;
const GROUP_CHAT = "any;+;chat123456789";
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const progress = (s: string) => process.stderr.write(`[device-profile] ${s}\n`);

const dir = mkdtempSync(join(tmpdir(), "gw-bench-device-profile-"));
try {
  const chatDbPath = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(chatDbPath), { recursive: true });
  const writer = openChatDbWriter(chatDbPath);
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: STRANGER_CHAT, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  writer.chat({
    guid: GROUP_CHAT,
    style: 43,
    chatIdentifier: "chat123456789",
    displayName: "Trip",
    participants: [FRIEND, STRANGER],
  });
  progress(`writing ${ROWS} rows`);
  const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split(" ");
  for (let done = 0; done < ROWS; done += 5000) {
    writer.db.transaction(() => {
      for (let i = done; i < Math.min(ROWS, done + 5000); i++) {
        const text = `backlog ${i} ${words.slice(0, 2 + (i % 10)).join(" ")}`;
        const k = i % 10;
        if (k === 0) writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text });
        else if (k === 1)
          writer.message({ chatGuid: GROUP_CHAT, from: i % 20 === 1 ? FRIEND : STRANGER, text });
        else writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
      }
    })();
  }
  writer.close();

  const results: Record<string, number> = {};
  const time = async (name: string, f: () => void | Promise<void>) => {
    const t = performance.now();
    await f();
    results[name] = Math.round((performance.now() - t) * 10) / 10;
    progress(`${name}: ${results[name]} ms`);
  };

  progress("read path");
  const readSteps = (attachments: "none" | "per row" | "per batch", withBody: boolean) => () => {
    const db = openChatDb(chatDbPath);
    let cursor = 0;
    for (;;) {
      const rows = db.rowsAfter(cursor, BATCH_ROWS);
      if (attachments === "per batch") db.attachmentsOf(rows.map((r) => r.rowid));
      for (const r of rows) {
        if (attachments === "per row") db.attachments(r.rowid);
        if (withBody) bodyText(r);
        cursor = r.rowid;
      }
      if (rows.length < BATCH_ROWS) break;
    }
    db.close();
  };
  await time(`rowsAfter (batches of ${BATCH_ROWS})`, readSteps("none", false));
  await time("+ attachment query per row (old)", readSteps("per row", false));
  await time("+ attachmentsOf per batch (now)", readSteps("per batch", false));
  await time("+ attachmentsOf + bodyText", readSteps("per batch", true));

  const batches: NormalizedMessage[][] = [];
  await time("poller tick, no-op ingest", async () => {
    let cursor: CursorRow | null = {
      source: "device_messenger",
      position: "0",
      updated_at: 0,
      state: null,
    };
    const cursors = {
      get: (_s: Source) => cursor,
      set: (source: Source, position: string, t: number, state: string | null = null) => {
        cursor = { source, position, updated_at: t, state };
      },
    };
    const poller = createPoller(
      {
        chatDbPath,
        attachmentDir: join(dir, "att"),
        attachmentMaxBytes: 0,
        homeDir: dir,
        backfillFenceMs: 0,
        attachmentWaitMs: 0,
        cursors,
        ids: createIdFactory(systemClock),
        clock: systemClock,
        log: silent,
      },
      (batch) => {
        batches.push([...batch.messages]);
        if (batch.cursor !== null)
          cursors.set(batch.source, batch.cursor, Date.now(), batch.cursorState ?? null);
        return [];
      },
    );
    await poller.tick();
    poller.close();
  });
  const messages = batches.flat();

  progress(`ingest of ${messages.length} messages`);
  const allowlist = buildAllowlist([
    { source: "device_messenger", id: FRIEND, person_id: "ann", display_name: "Ann" },
  ]);
  const ingestRun = async (name: string, batchSize: number, pragma: string | null) => {
    const store = openStore(join(dir, `${name}.db`));
    if (pragma) store.db.run(pragma);
    const ingest = createIngest({
      store,
      allowlist: () => allowlist,
      ids: createIdFactory(systemClock),
      clock: systemClock,
      webhooksEnabled: false,
      attachmentDir: join(dir, "att"),
      log: silent,
    });
    await time(name, () => {
      for (let i = 0; i < messages.length; i += batchSize) {
        ingest({ source: "device_messenger", messages: messages.slice(i, i + batchSize), cursor: String(i) });
      }
    });
    store.close();
  };
  await ingestRun(`ingest, batches of ${BATCH_ROWS}`, BATCH_ROWS, null);
  await ingestRun(
    `ingest, batches of ${BATCH_ROWS}, synchronous=OFF`,
    BATCH_ROWS,
    "PRAGMA synchronous = OFF",
  );
  await ingestRun(`ingest, batches of ${BIG}`, BIG, null);

  const rate = (ms: number | undefined) => (ms ? Math.round(ROWS / (ms / 1000)) : 0);
  const lines = [`where the backlog time goes, ${ROWS} rows (one process, warm OS cache)`];
  for (const [name, ms] of Object.entries(results)) {
    lines.push(`  ${name.padEnd(46)} ${String(ms).padStart(9)} ms ${String(rate(ms)).padStart(9)} rows/s`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stdout.write(`${JSON.stringify({ bench: "device-profile", rows: ROWS, ms: results })}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
