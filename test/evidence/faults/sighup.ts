/**
 * SIGHUP storms under load (reliability.md F9), on a real `gw serve` reading a chat.db: agents poll
 * /messages/unread and mark what they read throughout, while the allowlist is rewritten and reloaded
 * RELOADS times one by one (the stranger allowed, then not, and so on; one file invalid), and then
 * BURST times without waiting (signals that arrive together may be taken as one). After each paced
 * reload the stranger writes a message, whose class must follow the list in force (the invalid file
 * keeps the previous one). At the end no request failed and no stored message changed class.
 */
import { writeFileSync } from "node:fs";
import { chatDbFile } from "./chatdb-files.ts";
import { entry, FRIEND, type Gw, STRANGER, startGw, waitFor, workDir } from "./harness.ts";
import { type FaultRun, row } from "./types.ts";

export const RELOADS = 24;
export const INVALID_AT = 12;
export const BURST = 12;
const AGENTS = 4;

export interface SighupDetails {
  reloads: number;
  classified: { reload: number; expected: string; got: string }[];
  changedLater: number;
  burstFinal: { expected: string; got: string };
  requests: number;
  failed: number;
  invalidKept: boolean;
  exitCode: number;
}

const INVALID = '[[entry]]\nsource = "fax"\nid = "x"\nperson_id = "nobody"\n';

/** The list of reload `i`: the friend always, the stranger on odd reloads, and `i` filler entries. */
function list(i: number, strangerAllowed: boolean): string {
  const filler = Array.from({ length: i }, (_, k) =>
    entry("device_messenger", `+1555555${String(k).padStart(4, "0")}`, `f${k}`),
  );
  return [
    entry("device_messenger", FRIEND, "ann"),
    ...(strangerAllowed ? [entry("device_messenger", STRANGER, "stranger")] : []),
    ...filler,
  ].join("");
}

export async function sighupFaults(): Promise<FaultRun<SighupDetails>> {
  const work = workDir("sighup");
  const chat = chatDbFile(work.dir);
  let gw: Gw | null = null;
  let loading = true;
  try {
    gw = await startGw({
      dir: work.dir,
      env: { GW_CHAT_DB_PATH: chat.path, GW_DEVICE_POLL_INTERVAL_MS: "50" },
      allowlist: list(0, false),
    });
    const live = gw;
    const path = live.env.GW_ALLOWLIST_PATH as string;
    const statusOf = (text: string) =>
      live.db(
        (db) =>
          (
            db.query("SELECT allowlist_status AS s FROM messages WHERE text = ?1").get(text) as {
              s: string;
            } | null
          )?.s,
      );
    const reloadLines = () =>
      live.logs().filter((l) => l.msg === "allowlist loaded" || l.msg.startsWith("allowlist reload failed"));

    // Load: AGENTS agents read their unread messages and mark them read, without pause.
    let requests = 0;
    let failed = 0;
    const agent = async (n: number) => {
      const headers = { "x-agent-id": `load-${n}` };
      while (loading) {
        try {
          const u = await live.get("/messages/unread?limit=20", headers);
          const ids = ((u.body?.messages ?? []) as { id: string }[]).map((m) => m.id);
          const m = await live.post("/messages/mark_read", { message_ids: ids }, headers);
          requests += 2;
          if (u.status !== 200 || m.status !== 200) failed += 1;
        } catch {
          requests += 1;
          failed += 1;
        }
      }
    };
    const load = Promise.all(Array.from({ length: AGENTS }, (_, n) => agent(n)));

    const classified: SighupDetails["classified"] = [];
    let strangerAllowed = false;
    let invalidLogged = false;
    for (let i = 1; i <= RELOADS; i++) {
      const before = reloadLines().length;
      if (i === INVALID_AT) writeFileSync(path, INVALID);
      else {
        strangerAllowed = i % 2 === 1;
        writeFileSync(path, list(i, strangerAllowed));
      }
      live.proc.proc.kill("SIGHUP");
      const line = await waitFor(() => reloadLines()[before], `reload ${i} logged`);
      if (i === INVALID_AT) invalidLogged = line.msg.startsWith("allowlist reload failed");
      const text = `stranger after reload ${i}`;
      chat.say(text, STRANGER);
      chat.say(`friend after reload ${i}`);
      const got = await waitFor(() => statusOf(text), `"${text}" stored`);
      classified.push({ reload: i, expected: strangerAllowed ? "allowed" : "unknown", got });
    }

    // Burst: rewrites and signals back to back, ending on a list with a count seen nowhere else.
    const burstStart = Date.now();
    for (let i = 0; i < BURST; i++) {
      writeFileSync(path, list(RELOADS + 1 + i, i % 2 === 0));
      live.proc.proc.kill("SIGHUP");
    }
    const finalEntries = 1 + 2 * RELOADS + 7;
    writeFileSync(path, list(finalEntries - 1, false));
    live.proc.proc.kill("SIGHUP");
    await waitFor(
      () =>
        live
          .logs()
          .find((l) => l.msg === "allowlist loaded" && l.entries === finalEntries && l.at >= burstStart - 5),
      "the burst's last list loaded",
    );
    chat.say("stranger after the burst", STRANGER);
    const burstGot = await waitFor(() => statusOf("stranger after the burst"), "the burst message stored");

    loading = false;
    await load;
    const changedLater = classified.filter(
      (c) => statusOf(`stranger after reload ${c.reload}`) !== c.got,
    ).length;
    const exitCode = await live.stop();
    const details: SighupDetails = {
      reloads: RELOADS + BURST + 1,
      classified,
      changedLater,
      burstFinal: { expected: "unknown", got: burstGot },
      requests,
      failed,
      invalidKept: invalidLogged,
      exitCode,
    };
    return { rows: rowsOf(details), notes: [], details };
  } finally {
    loading = false;
    await gw?.stop();
    work.remove();
  }
}

function rowsOf(d: SighupDetails) {
  const wrong = d.classified.filter((c) => c.got !== c.expected);
  const invalid = d.classified.find((c) => c.reload === INVALID_AT);
  return [
    row(
      `SIGHUP allowlist reloads under load: ${RELOADS} one by one (one invalid file), then ${BURST + 1} back to back`,
      d.reloads,
      `${d.requests} unread/mark_read requests from ${AGENTS} agents meanwhile, ${d.failed} failed; ${d.classified.length - wrong.length} of ${d.classified.length} new messages classed by the list in force; after the invalid file the stranger stayed ${invalid?.got} (the previous list); after the burst, by its last list (${d.burstFinal.got}); ${d.changedLater} stored message(s) changed class later; exit ${d.exitCode}`,
      {
        "0 failed requests": d.failed === 0 && d.requests > 0,
        "new messages follow the list": wrong.length === 0,
        "invalid file keeps the old list": d.invalidKept && invalid?.got === invalid?.expected,
        "burst ends on the last list": d.burstFinal.got === d.burstFinal.expected,
        "old messages not recomputed": d.changedLater === 0,
        "clean exit": d.exitCode === 0,
      },
    ),
  ];
}
