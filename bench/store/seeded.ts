/**
 * The file bench/store/store.ts times, seeded once: the messages (seed.ts), then the agents' read state
 * (reads.ts); `Seeded` is what the measure and the report read of it.
 */
import { openStore } from "../../src/store/store.ts";
import { elapsed } from "../lib/settings.ts";
import { seedAgents } from "./reads.ts";
import { seedMessages } from "./seed.ts";

export type Seeded = ReturnType<typeof seedStore>;

/**
 * Seeds the database at `path` on one connection (a 256 MiB page cache while seeding only), then
 * closes it (the measure reopens it as gw opens it).
 */
export function seedStore(path: string) {
  const store = openStore(path);
  store.db.run("PRAGMA cache_size = -262144");
  const tSeed = performance.now();
  const s = seedMessages(store);
  process.stderr.write(`  messages: ingest ${s.ingestMs} ms, insert ${s.insertMs} ms\n`);
  const agents = seedAgents(store, s);
  const seedMs = elapsed(tSeed);
  process.stderr.write(`  read marks: ${agents.readsMs} ms\n`);
  store.close();
  return {
    channels: s.world.channels,
    allIds: s.allIds,
    messageTs: s.messageTs,
    ingestMs: s.ingestMs,
    insertMs: s.insertMs,
    ...agents,
    seedMs,
  };
}
