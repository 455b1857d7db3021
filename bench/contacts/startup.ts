/**
 * bench/contacts/contacts.ts, part (a): `gw serve` start-up as bench/startup/startup.ts measures it (lib/serve-start.ts:
 * the compiled binary, spawn → first /healthz 200 on a fresh home), with the Contacts folder of
 * world.ts (GW_CONTACTS_DIR) and without Contacts (GW_CONTACTS=0), alternating A B B A so
 * neither side always runs first. A run with Contacts is only counted once its log says the runner read
 * every card (`contacts read`, waited for after the timed part): the figure cannot come from a gw that
 * skipped them. The runner's own figures (its first check's start → the book swapped in, its slices and
 * the longest, wall time with whatever ran in it: a garbage collection, time without a CPU) are kept too.
 */
import { join } from "node:path";
import { timeServe } from "../lib/serve-start.ts";
import { type Dist, dist } from "../lib/stats.ts";
import { type Book, type ContactsRead, waitContactsRead } from "./world.ts";

export interface StartupResult {
  runs: number;
  withContacts: Dist;
  without: Dist;
  /** The runner's `contacts read` figures in the runs with Contacts: ms, slices, the longest slice. */
  contactsReadMs: Dist;
  slices: Dist;
  longestSliceMs: Dist;
  /** with − without, ms. */
  p50DeltaMs: number;
  p90DeltaMs: number;
}

export async function startupAB(
  o: Book & { gw: string; root: string; runs: number },
): Promise<StartupResult> {
  const reads: ContactsRead[] = [];
  const withContacts = () =>
    timeServe(o.gw, ["serve"], {
      root: o.root,
      env: { GW_CONTACTS_DIR: o.contactsDir, GW_DEFAULT_REGION: "US" },
      async afterHealthy(home) {
        const r = await waitContactsRead(join(home, "logs"));
        if (r.cards !== o.cards) throw new Error(`gw read ${r.cards} cards, not ${o.cards}`);
        reads.push(r);
      },
    });
  const without = () =>
    timeServe(o.gw, ["serve"], { root: o.root, env: { GW_CONTACTS: "0", GW_DEFAULT_REGION: "US" } });
  // One untimed run each, so the binary and the address book are in the page cache.
  await withContacts();
  await without();
  reads.length = 0;
  const a: number[] = [];
  const b: number[] = [];
  o.progress(`start-up: ${o.runs} runs each, alternating`);
  for (let i = 0; i < o.runs; i++) {
    if (i % 2 === 0) {
      a.push(await withContacts());
      b.push(await without());
    } else {
      b.push(await without());
      a.push(await withContacts());
    }
  }
  const da = dist(a);
  const db = dist(b);
  return {
    runs: o.runs,
    withContacts: da,
    without: db,
    contactsReadMs: dist(reads.map((r) => r.ms)),
    slices: dist(reads.map((r) => r.slices)),
    longestSliceMs: dist(reads.map((r) => r.longestSliceMs)),
    p50DeltaMs: Math.round((da.p50 - db.p50) * 100) / 100,
    p90DeltaMs: Math.round((da.p90 - db.p90) * 100) / 100,
  };
}
