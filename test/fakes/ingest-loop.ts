/**
 * A stand-in connector for crash tests: reads "source rows" 1..GW_TEST_ROWS from its stored cursor
 * on, in batches of 1–7, and hands each batch to the real ingest pipeline with the batch's last row
 * as the new cursor. Every third row comes from a stranger. Run as a child process and killed with
 * SIGKILL at random moments by test/e2e/crash-ingest.test.ts.
 */
import { join } from "node:path";
import { buildAllowlist } from "../../src/allowlist/parse.ts";
import { createIdFactory } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/ports.ts";
import { createIngest, type NormalizedMessage } from "../../src/ingest/ingest.ts";
import { openStore } from "../../src/store/store.ts";

const dbPath = process.env.GW_DB_PATH as string;
const rows = Number(process.env.GW_TEST_ROWS ?? "1000");
const store = openStore(dbPath);
const allowlist = buildAllowlist([
  { source: "device_messenger", id: "+15555550100", person_id: "ann", display_name: null },
]);
const ingest = createIngest({
  store,
  allowlist: () => allowlist,
  ids: createIdFactory(systemClock),
  clock: systemClock,
  webhooksEnabled: true,
  attachmentDir: join(dbPath, "..", "attachments"),
  log: { debug() {}, info() {}, warn() {}, error() {}, child: () => ({}) as never },
});

const row = (n: number): NormalizedMessage => ({
  source: "device_messenger",
  platformId: `row-${n}`,
  channel: { id: "+15555550100", type: "dm", platformRef: "any;-;+15555550100" },
  sender: n % 3 === 0 ? { id: "+15555550999", displayName: "?" } : { id: "+15555550100", displayName: "Ann" },
  service: "iMessage",
  text: `row ${n}`,
  replyToPlatformId: null,
  timestampMs: 1_800_000_000_000 + n,
  attachments: [],
  raw: { ROWID: n },
  direction: "inbound",
});

let next = Number(store.cursors.get("device_messenger")?.position ?? "0") + 1;
process.stdout.write(`start ${next}\n`);
while (next <= rows) {
  const size = 1 + (next % 7);
  const batch: NormalizedMessage[] = [];
  for (let n = next; n < next + size && n <= rows; n++) batch.push(row(n));
  const last = next + batch.length - 1;
  ingest({ source: "device_messenger", messages: batch, cursor: String(last) });
  next = last + 1;
}
process.stdout.write("done\n");
store.close();
