/**
 * The fault runs' handle on a real `gw serve` process (from source, explicit environment, a temporary
 * folder of its own): its HTTP API with the bearer and an agent id, its log lines (the JSON it writes on
 * stderr), read-only looks into its state database, and a stop that always ends it. Usable from
 * `bun test` and from `bun run` alike (nothing here imports bun:test).
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  freePort,
  type GwProcess,
  isolatedEnv,
  spawnGw,
  stopGw,
  waitFor,
  waitForHealth,
} from "../../helpers/process.ts";

export const FRIEND = "+15555550100";
export const STRANGER = "+15555550199";
export const AGENT_ID = "faults-agent";

export const entry = (source: "device_messenger" | "community_chat", id: string, person: string) =>
  `[[entry]]\nsource = "${source}"\nid = "${id}"\nperson_id = "${person}"\n`;

/** A temporary folder and its removal (runs leave nothing behind). */
export function workDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `gw-faults-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface LogLine {
  level: number;
  /** ms since the epoch */
  at: number;
  msg: string;
  [key: string]: unknown;
}

export interface ApiAnswer {
  status: number;
  ms: number;
  body: Record<string, unknown> | null;
  text: string;
}

export interface Gw {
  port: number;
  env: Record<string, string>;
  pid: number;
  proc: GwProcess;
  get(path: string, headers?: Record<string, string>): Promise<ApiAnswer>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
  health(): Promise<ApiAnswer>;
  /** Every JSON log line written on stderr so far. */
  logs(): LogLine[];
  /** A read-only look into the state database. */
  db<T>(look: (db: Database) => T): T;
  /** SIGTERM (or `signal`), then SIGKILL after 10 s; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface GwOptions {
  dir: string;
  env?: Record<string, string>;
  /** Written to GW_ALLOWLIST_PATH unless it exists already (restarts keep it). */
  allowlist?: string;
  /** Port to bind (restarts reuse theirs); default a free one. */
  port?: number;
  healthTimeoutMs?: number;
  /** Runs the compiled dist/gw (build it first: ensureBinary) instead of the source. */
  binary?: boolean;
}

export async function startGw(o: GwOptions): Promise<Gw> {
  const port = o.port ?? freePort();
  const env = isolatedEnv(o.dir, { GW_BIND_PORT: String(port), ...o.env });
  if (o.allowlist !== undefined) writeFileSync(env.GW_ALLOWLIST_PATH as string, o.allowlist);
  const proc = spawnGw(["serve"], env, { binary: o.binary === true });
  const gw = handle(port, env, proc);
  try {
    await Promise.race([
      waitForHealth(port, o.healthTimeoutMs ?? 15_000),
      proc.exited.then((code) => {
        throw new Error(
          `gw serve exited with ${code} before answering: ${proc.output().stderr.slice(-2000)}`,
        );
      }),
    ]);
  } catch (err) {
    await gw.stop("SIGKILL");
    throw err;
  }
  return gw;
}

function handle(port: number, env: Record<string, string>, proc: GwProcess): Gw {
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${env.GW_BEARER_TOKEN}`, "x-agent-id": AGENT_ID };
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const t0 = performance.now();
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {}
    return { status: res.status, ms: performance.now() - t0, body: parsed, text };
  };
  let stopped: Promise<number> | null = null;
  return {
    port,
    env,
    pid: proc.proc.pid,
    proc,
    get: (path, headers) => call("GET", path, undefined, headers),
    post: (path, body, headers) => call("POST", path, body, headers),
    health: () => call("GET", "/healthz"),
    logs: () => parseLogs(proc.output().stderr),
    db: (look) => {
      const db = new Database(env.GW_DB_PATH as string, { readonly: true });
      try {
        return look(db);
      } finally {
        db.close();
      }
    },
    stop(signal = "SIGTERM") {
      stopped ??= stopGw(proc, signal);
      return stopped;
    },
  };
}

export function parseLogs(stderr: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      out.push({ ...o, level: Number(o.level), at: Date.parse(String(o.time)), msg: String(o.msg ?? "") });
    } catch {}
  }
  return out;
}

/** Waits for a log line matching `match`, at most `timeoutMs`. */
export function waitForLog(gw: Gw, match: (l: LogLine) => boolean, what: string, timeoutMs = 10_000) {
  return waitFor(() => gw.logs().find(match), what, timeoutMs);
}

export { waitFor };

/** How many messages gw stored with exactly this text. */
export const storedCount = (gw: Gw, text: string): number =>
  gw.db(
    (db) => (db.query("SELECT COUNT(*) AS n FROM messages WHERE text = ?1").get(text) as { n: number }).n,
  );

/** Unread envelopes of the faults agent (up to 100). */
export async function unread(gw: Gw): Promise<{ id: string; text: string; sender: { id: string } }[]> {
  const res = await gw.get("/messages/unread?limit=100");
  if (res.status !== 200) throw new Error(`unread answered ${res.status}: ${res.text}`);
  return (res.body as { messages: { id: string; text: string; sender: { id: string } }[] }).messages;
}

/** Whole milliseconds, for evidence text. */
export const ms = (n: number): string => `${Math.round(n)} ms`;
