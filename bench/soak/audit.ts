/**
 * The exactly-once audit of bench/soak/soak.ts, read from gw.db once gw serve has stopped, with the webhook
 * sink's records: every message of the soak stored once with the allowlist status its sender has (the
 * text's audit key, world.ts), one delivery row per allowlisted message and none for the others,
 * each delivered and its id received by the sink, and every Discord file stored.
 */
import { Database } from "bun:sqlite";
import { parseKey } from "./world.ts";

export interface SoakAudit {
  stored: { once: number; missing: number; duplicated: number; wrongStatus: number; unexpected: number };
  webhooks: {
    allowed: number;
    rows: number;
    deliveredOnce: number;
    notDelivered: number;
    forUnknown: number;
    /** Delivered rows whose id the sink never received, and sink ids no row has. */
    notReceived: number;
    sinkOnly: number;
    attemptsOverOne: number;
    dead: number;
  };
  attachments: { rows: number; stored: number };
}

export function auditStore(
  dbPath: string,
  perSource: number,
  sink: { byId: ReadonlyMap<string, number> },
): SoakAudit {
  const db = new Database(dbPath, { readonly: true });
  try {
    const seen = { d: new Uint8Array(perSource), i: new Uint8Array(perSource) };
    const allowedKey = { d: new Uint8Array(perSource), i: new Uint8Array(perSource) };
    const stored = { once: 0, missing: 0, duplicated: 0, wrongStatus: 0, unexpected: 0 };
    const rows = db.query<{ text: string; status: string; source: string }, []>(
      "SELECT text, allowlist_status AS status, source FROM messages",
    );
    for (const r of rows.iterate()) {
      const k = parseKey(r.text);
      if (!k || k.index >= perSource || r.source !== (k.p === "d" ? "community_chat" : "device_messenger")) {
        stored.unexpected++;
        continue;
      }
      seen[k.p][k.index] = Math.min(255, (seen[k.p][k.index] as number) + 1);
      allowedKey[k.p][k.index] = k.allowed ? 1 : 0;
      if (r.status !== (k.allowed ? "allowed" : "unknown")) stored.wrongStatus++;
    }
    for (const p of ["d", "i"] as const)
      for (const n of seen[p]) {
        if (n === 0) stored.missing++;
        else if (n === 1) stored.once++;
        else stored.duplicated++;
      }

    const hooks = {
      allowed: 0,
      rows: 0,
      deliveredOnce: 0,
      notDelivered: 0,
      forUnknown: 0,
      notReceived: 0,
      sinkOnly: 0,
      attemptsOverOne: 0,
      dead: 0,
    };
    const rowsPer = { d: new Uint8Array(perSource), i: new Uint8Array(perSource) };
    const delivered = { d: new Uint8Array(perSource), i: new Uint8Array(perSource) };
    const ids = new Set<string>();
    const deliveries = db.query<{ id: string; status: string; attempts: number; text: string }, []>(
      `SELECT d.id AS id, d.status AS status, d.attempt_count AS attempts, m.text AS text
       FROM webhook_deliveries d JOIN messages m ON m.id = d.message_id`,
    );
    for (const d of deliveries.iterate()) {
      hooks.rows++;
      ids.add(d.id);
      if (d.attempts > 1) hooks.attemptsOverOne++;
      if (d.status === "dead") hooks.dead++;
      const k = parseKey(d.text);
      if (!k || k.index >= perSource || !k.allowed) {
        hooks.forUnknown++;
        continue;
      }
      rowsPer[k.p][k.index] = Math.min(255, (rowsPer[k.p][k.index] as number) + 1);
      const received = sink.byId.has(d.id);
      if (!received) hooks.notReceived++;
      if (d.status === "delivered" && received) delivered[k.p][k.index] = 1;
    }
    for (const id of sink.byId.keys()) if (!ids.has(id)) hooks.sinkOnly++;
    for (const p of ["d", "i"] as const)
      for (let i = 0; i < perSource; i++) {
        if (seen[p][i] === 0 || allowedKey[p][i] === 0) continue;
        hooks.allowed++;
        if (rowsPer[p][i] === 1 && delivered[p][i] === 1) hooks.deliveredOnce++;
        else hooks.notDelivered++;
      }

    const files = db
      .query<{ rows: number; stored: number }, []>(
        "SELECT COUNT(*) AS rows, COUNT(file_name) AS stored FROM attachments",
      )
      .get() ?? { rows: 0, stored: 0 };
    return { stored, webhooks: hooks, attachments: files };
  } finally {
    db.close();
  }
}
