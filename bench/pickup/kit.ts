/**
 * Child process of bench/pickup/pickup.ts and bench/idle/idle.ts: @photon-ai/imessage-kit 3.0.0's watcher on the
 * chat.db at BENCH_CHAT_DB, the way its README starts one:
 * `new IMessageSDK({ databasePath }).startWatching({ onIncomingMessage })`. Its watcher is fs.watch on
 * `chat.db-wal` ("change" → read the rows after the last ROWID, 100 at a time; the directory is watched
 * only while the WAL is missing); nothing polls.
 *
 * Linux: the SDK's constructor calls `requireMacOS()` (`process.platform !== "darwin"` → throws), and
 * nothing else in the watch path depends on the OS (bun:sqlite, node:fs watch). `process.platform`
 * reads "darwin" for that one constructor call and is restored right after; the SDK's own code runs
 * unchanged. (Its temp-file cleaner, which only ever touches ~/Pictures/imsg_temp_*, runs under the
 * HOME the parent gives: a temp dir.)
 *
 * Prints `{"ready":0,"pid":…}`, then `{"seen":<text>,"t":<now>,"rowid":n}` for every incoming message
 * at the instant its callback runs, and answers the commands of lib/child-protocol.ts.
 */
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const path = process.env.BENCH_CHAT_DB;
if (!path) {
  process.stderr.write("BENCH_CHAT_DB is required\n");
  process.exit(2);
}

const realPlatform = process.platform;
const platform = Object.getOwnPropertyDescriptor(process, "platform");
Object.defineProperty(process, "platform", { value: "darwin", configurable: true });
const { IMessageSDK } = await import("@photon-ai/imessage-kit");
let sdk: InstanceType<typeof IMessageSDK>;
try {
  sdk = new IMessageSDK({ databasePath: path });
} finally {
  if (platform) Object.defineProperty(process, "platform", platform);
}
if (process.platform !== realPlatform) throw new Error("process.platform was not restored");

await sdk.startWatching({
  onIncomingMessage: (m) => {
    emit({ seen: m.text ?? "", t: now(), rowid: m.rowId });
  },
  onError: (err) => emit({ error: String(err) }),
});
emit({ ready: 0, pid: process.pid });
await serveCommands(async () => {
  await sdk.close();
});
