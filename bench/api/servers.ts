/**
 * bench/api/api.ts's servers: `gateway` (lib/gw-server.ts, gw built as `gw serve` builds it), `raw` (a
 * bare Bun.serve doing the same store calls) or `bare` (Bun.serve and plain SQL on a plain copy,
 * bare.ts), the last two from server.ts, one at a time on a free port (lib/http-server.ts); and the
 * check that all three give the same JSON to every agent before any load.
 */
import { join } from "node:path";
import { GW_SERVER, type Server, startServer, stopServer } from "../lib/http-server.ts";
import { TOKEN } from "../lib/settings.ts";
import { AGENTS, progress, UNREAD_PATH } from "./settings.ts";

export type Target = "gateway" | "raw" | "bare";

/** Starts the server of `target` on `dir`; the baselines write attachment URLs with `baseUrl`. */
export const startTarget = (target: Target, dir: string, baseUrl: string): Promise<Server> =>
  startServer(target === "gateway" ? GW_SERVER : join(import.meta.dir, "server.ts"), target, dir, baseUrl);

async function getUnread(port: number, agent: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${UNREAD_PATH}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": agent },
  });
  if (res.status !== 200)
    throw new Error(`GET ${UNREAD_PATH} as ${agent}: ${res.status} ${await res.text()}`);
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
  const gw = await startTarget("gateway", dir, "");
  const gatewayPort = gw.port;
  for (const a of AGENTS) {
    const body = (await getUnread(gw.port, a)) as { messages: unknown[] };
    gatewayAnswers.set(a, body);
    rowsPerAgent[a] = body.messages.length;
  }
  await stopServer(gw);
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  for (const target of ["raw", "bare"] as const) {
    const server = await startTarget(target, dir, baseUrl);
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
