/**
 * bench/api/api.ts's servers: bench/api/server.ts in a child process, `gateway` (built as `gw serve` builds
 * it), `raw` (a bare Bun.serve doing the same store calls) or `bare` (Bun.serve and plain SQL on a
 * plain copy, bare.ts), one at a time on a free port; and the check that all three give the same
 * JSON to every agent before any load. `children` holds every process
 * still running, so the benchmark's cleanup can kill them.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../../test/helpers/process.ts";
import { AGENTS, PATH, progress, TOKEN } from "./settings.ts";

export type Target = "gateway" | "raw" | "bare";

interface Server {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  stderr: () => string;
}

/** Every child process still running (servers and load generators), for the cleanup. */
export const children = new Set<Subprocess>();

/**
 * Starts `script <target> <dir> <port>` (bench/api/server.ts unless given: channels/channels.ts serves its raw
 * side from channels/raw.ts) and waits for its ready line.
 */
export async function startServer(
  target: Target,
  dir: string,
  baseUrl: string,
  script = "server.ts",
): Promise<Server> {
  const port = freePort();
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, script), target, dir, String(port)], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      BENCH_TOKEN: TOKEN,
      BENCH_BASE_URL: baseUrl,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.add(proc);
  let err = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  })();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  // One timer for the whole wait, cleared once ready: a pending sleep would keep this process alive.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), 30_000);
  });
  try {
    while (!out.includes("ready ")) {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (chunk === null || chunk.done) throw new Error(`${target} server did not start:\n${out}${err}`);
      out += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
  reader.releaseLock();
  return { proc, port, stderr: () => err };
}

export async function stopServer(s: Server): Promise<void> {
  s.proc.kill("SIGTERM");
  const code = await s.proc.exited;
  children.delete(s.proc);
  if (code !== 0) throw new Error(`server exited with ${code}:\n${s.stderr()}`);
}

async function getUnread(port: number, agent: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${PATH}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": agent },
  });
  if (res.status !== 200) throw new Error(`GET ${PATH} as ${agent}: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * Fetches every agent's page from the gateway, then from the raw and the bare servers (whose attachment
 * URLs use the base the gateway derives from its bind address), and fails unless the parsed JSON is
 * deep-equal.
 * Returns that base and the rows each agent got.
 */
export async function checkSameAnswers(dir: string) {
  const gatewayAnswers = new Map<string, unknown>();
  const rowsPerAgent: Record<string, number> = {};
  const gw = await startServer("gateway", dir, "");
  const gatewayPort = gw.port;
  for (const a of AGENTS) {
    const body = (await getUnread(gw.port, a)) as { messages: unknown[] };
    gatewayAnswers.set(a, body);
    rowsPerAgent[a] = body.messages.length;
  }
  await stopServer(gw);
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  for (const target of ["raw", "bare"] as const) {
    const server = await startServer(target, dir, baseUrl);
    for (const a of AGENTS) {
      if (!Bun.deepEquals(await getUnread(server.port, a), gatewayAnswers.get(a))) {
        throw new Error(`the ${target} and gateway answers differ for ${a}`);
      }
    }
    await stopServer(server);
  }
  progress(`answers identical for all 10 agents; rows ${JSON.stringify(rowsPerAgent)}`);
  return { baseUrl, rowsPerAgent };
}
