/**
 * The service the gateway items send to, behind one Target: in this process (createService wired as
 * `gw serve` wires it, with unhandled rejections/exceptions and error-level logs collected) or a real
 * `gw serve` process (a dead process, non-log stderr lines, error logs). `close` stops it and says what
 * went wrong while stopping; an in-process stop past STOP_DEADLINE_MS is a failure, not a hung run.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatProblems, loadConfig } from "../../../../src/config/load.ts";
import type { HostInfo } from "../../../../src/config/paths.ts";
import { buildConnectors } from "../../../../src/connectors/registry.ts";
import { systemClock } from "../../../../src/core/ports.ts";
import { bunSpawner } from "../../../../src/core/spawn.ts";
import { FAKE_BOT_TOKEN, type FakeDiscord } from "../../../../src/demo/fake-discord/server.ts";
import { createService, type Service } from "../../../../src/service.ts";
import { recordingLogger } from "../../../helpers/logger.ts";
import { isolatedEnv } from "../../../helpers/process.ts";
import { startGw, workDir } from "../../faults/harness.ts";
import type { Json } from "./values.ts";

const AGENT = "fuzz-gateway-agent";

export interface StoredRow {
  id: string;
  platform_id: string;
  channel_id: string;
  sender_id: string;
  sender_name: string;
  text: string;
  status: string;
  text_type: string;
  name_type: string;
  attachments: number;
}

const ROWS_SQL = `SELECT m.id, m.platform_id, m.channel_id, m.sender_id, m.sender_name, m.text,
  m.allowlist_status AS status, typeof(m.text) AS text_type, typeof(m.sender_name) AS name_type,
  (SELECT COUNT(*) FROM attachments a WHERE a.message_id = m.id) AS attachments
  FROM messages m WHERE m.source = 'community_chat' AND m.id > ? ORDER BY m.id`;
const COUNT_SQL = "SELECT COUNT(*) AS n FROM messages WHERE source = 'community_chat' AND platform_id = ?";

export interface Target {
  api(method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  rowsAfter(id: string): StoredRow[];
  count(platformId: string): number;
  /** Unhandled rejections/exceptions, error-level log lines, a dead process: empty while all is well. */
  problems(): string[];
  /** Stops it; what went wrong while stopping, if anything. */
  close(): Promise<string[]>;
}

const TUNING = {
  restTimeoutMs: 1_000,
  restRetries: 1,
  throttleIdentify: false,
  loginRetryMs: [200],
  stopDrainMs: 2_000,
  downloadTimeoutMs: 2_000,
};

export const describeError = (e: unknown) =>
  (e instanceof Error ? (e.stack ?? e.message) : String(e)).slice(0, 800);

/** A service stop taking longer is a failure, not a hung run (one never ended once, at scale 30). */
const STOP_DEADLINE_MS = 20_000;
const settlesWithin = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

export async function inProcess(fake: FakeDiscord, allowlist: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "gw-fuzz-gateway-"));
  const seen: string[] = [];
  const onRejection = (e: unknown) => void seen.push(`unhandled rejection: ${describeError(e)}`);
  const onException = (e: unknown) => void seen.push(`uncaught exception: ${describeError(e)}`);
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  const env: Record<string, string> = {
    ...isolatedEnv(dir),
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
  };
  const auth = { authorization: `Bearer ${env.GW_BEARER_TOKEN}`, "x-agent-id": AGENT };
  const log = recordingLogger();
  let svc: Service | null = null;
  const close = async () => {
    const stopped = svc === null || (await settlesWithin(svc.close(), STOP_DEADLINE_MS));
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
    rmSync(dir, { recursive: true, force: true });
    return stopped ? [] : [`the service did not finish stopping within ${STOP_DEADLINE_MS} ms`];
  };
  try {
    writeFileSync(env.GW_ALLOWLIST_PATH as string, allowlist);
    const host: HostInfo = { platform: "linux", homeDir: dir, cwd: dir };
    const loaded = loadConfig(env, host);
    if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
    const deps = { config: loaded.config, env, host, clock: systemClock, log, spawner: bunSpawner };
    svc = createService({ ...deps, connectors: buildConnectors({ ...deps, communityTuning: TUNING }) });
    await svc.start();
  } catch (err) {
    await close();
    throw err;
  }
  const service = svc;
  return {
    api: async (method, path, body) => {
      const res = await service.app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
      return { status: res.status, body: (await res.json()) as Json };
    },
    rowsAfter: (id) => service.store.db.query<StoredRow, [string]>(ROWS_SQL).all(id),
    count: (id) => (service.store.db.query(COUNT_SQL).get(id) as { n: number }).n,
    problems: () => [
      ...seen,
      ...log.entries
        .filter((e) => e.level === "error")
        .map((e) => `error logged: ${e.msg} ${JSON.stringify(e.obj).slice(0, 300)}`),
    ],
    close,
  };
}

export async function subprocess(fake: FakeDiscord, allowlist: string): Promise<Target> {
  const work = workDir("fuzz-gateway");
  const gw = await startGw({
    dir: work.dir,
    env: { GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN, GW_COMMUNITY_API_URL: fake.apiUrl },
    allowlist,
  }).catch((err) => {
    work.remove();
    throw err;
  });
  const problems = () => {
    const out: string[] = [];
    const { exitCode, signalCode } = gw.proc.proc;
    if (exitCode !== null || signalCode !== null)
      out.push(`gw serve exited (${exitCode ?? signalCode}): ${gw.proc.output().stderr.slice(-1500)}`);
    for (const line of gw.proc.output().stderr.split("\n"))
      if (line.trim() !== "" && !line.startsWith("{")) out.push(`gw serve wrote a non-log line: ${line}`);
    for (const l of gw.logs())
      if (l.level >= 50) out.push(`error logged: ${JSON.stringify(l).slice(0, 300)}`);
    return out;
  };
  return {
    api: async (method, path, body) => {
      const res = method === "GET" ? await gw.get(path) : await gw.post(path, body);
      return { status: res.status, body: res.body ?? {} };
    },
    rowsAfter: (id) => gw.db((db) => db.query<StoredRow, [string]>(ROWS_SQL).all(id)),
    count: (id) => gw.db((db) => (db.query(COUNT_SQL).get(id) as { n: number }).n),
    problems,
    close: async () => {
      const found = problems();
      const code = await gw.stop("SIGTERM");
      work.remove();
      return code === 0 || found.length > 0 ? [] : [`gw serve exited ${code} on SIGTERM`];
    },
  };
}
