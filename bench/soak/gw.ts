/**
 * Child process of bench/soak/soak.ts with BENCH_SOAK_PROBE=1: gw built as `gw serve` builds it (as
 * load/gw.ts: loadConfig over its GW_ variables, the pino logger, both real connectors, createService,
 * prepare(), listen on GW_BIND_HOST:GW_BIND_PORT, start()), plus a look inside, which the real command
 * does not offer. Nothing here runs between the parent's questions.
 *
 *   bun run bench/soak/gw.ts
 *
 * Prints `{"ready":<port>,"pid":…}` once both connectors are `ok`. Commands besides those of
 * lib/child-protocol.ts: `{"cmd":"heap","gc":bool}` → the process's memory (RSS, mimalloc's committed
 * memory), the JavaScript heap (bun:jsc heapStats: live size, capacity, memory its objects own outside
 * it, cell count, the 15 commonest cell types), discord.js's cache sizes (the Client is taken at its
 * login(), counted by the link's cacheSizesOf) and gw.db's page cache setting; with `gc`, after
 * Bun.gc(true) (a full collection and sweep), with the time it took. `{"cmd":"snapshot","path"}` writes
 * Bun.generateHeapSnapshot() there.
 */

import { heapStats, memoryUsage } from "bun:jsc";
import { writeFileSync } from "node:fs";
import { cacheSizesOf } from "../../src/connectors/community-chat/discord-link.ts";
import { emit, serveCommands } from "../lib/child-protocol.ts";
import { bothConnectorsOk, serveLikeGw, serveSetup } from "../lib/gw-child.ts";

// Take the discord.js Client when the connector logs it in (discord.js loads eagerly here).
const { Client } = await import("discord.js");
let client: InstanceType<typeof Client> | null = null;
const login = Client.prototype.login;
Client.prototype.login = function (this: InstanceType<typeof Client>, token?: string) {
  client = this;
  return login.call(this, token);
};

const setup = await serveSetup(process.env);
const { svc, states } = await serveLikeGw(setup, {
  hostname: setup.config.bindHost,
  port: setup.config.bindPort,
});
await bothConnectorsOk(states);
emit({ ready: svc.app.server?.port ?? 0, pid: process.pid });

const MiB = 1024 * 1024;
const r1 = (x: number) => Math.round((x / MiB) * 10) / 10;

function discordCaches() {
  return client ? cacheSizesOf(client) : null;
}

function heap(gc: boolean) {
  const t = performance.now();
  if (gc) Bun.gc(true);
  const gcMs = Math.round(performance.now() - t);
  const h = heapStats();
  const m = memoryUsage();
  return {
    gcMs: gc ? gcMs : null,
    rssMiB: r1(m.current),
    mimallocCommitMiB: r1(m.currentCommit),
    heapSizeMiB: r1(h.heapSize),
    heapCapacityMiB: r1(h.heapCapacity),
    extraMiB: r1(h.extraMemorySize),
    objects: h.objectCount,
    protectedObjects: h.protectedObjectCount,
    types: Object.fromEntries(Object.entries(h.objectTypeCounts).slice(0, 15)),
    discord: discordCaches(),
    sqliteCacheSize: (svc.store.db.query("PRAGMA cache_size").get() as { cache_size: number }).cache_size,
  };
}

await serveCommands(
  async () => {
    svc.endLongPolls();
    await svc.app.stop();
    await svc.close();
  },
  (c) => {
    if (c.cmd === "heap") return heap(c.gc === true);
    if (c.cmd === "snapshot") {
      writeFileSync(String(c.path), JSON.stringify(Bun.generateHeapSnapshot()));
      return { written: String(c.path) };
    }
    return { error: `unknown command ${c.cmd}` };
  },
);
