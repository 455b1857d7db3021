/**
 * A real gw service listening on a port, for `get_attachment` tests: `stored` puts bytes in its attachment
 * directory and ingests an allowlisted message carrying them; `env` points `gw mcp` at it. Plus readers of
 * the tool's answer (its JSON item, the decoded image) and where a client's cache lives.
 * `attachmentsOverMcp` adds a `gw mcp --extended` client on it, both ended after the file's tests.
 */
import { afterAll } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createIdFactory } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/ports.ts";
import type { StagedAttachment } from "../../src/ingest/ingest.ts";
import { closeAll, connectMcp, type McpHandle, type ToolResult } from "./mcp-client.ts";
import { freePort } from "./process.ts";
import { inbound, TOKEN, testService } from "./service.ts";

export const ids = createIdFactory(systemClock);

export async function attachmentService() {
  const t = await testService({ clock: systemClock });
  const port = freePort();
  t.svc.app.listen({ hostname: "127.0.0.1", port, reusePort: false });
  mkdirSync(t.attachmentsDir, { recursive: true });
  const env = { GW_BEARER_TOKEN: TOKEN, GW_AGENT_ID: "mcp-agent", GW_BASE_URL: `http://127.0.0.1:${port}` };
  /** A staged attachment of `bytes` in the service's directory (not yet part of a message). */
  const staged = (bytes: Uint8Array, mime: string): StagedAttachment => {
    const id = ids.attachment();
    writeFileSync(join(t.attachmentsDir, id), bytes);
    return { id, mime, sizeBytes: bytes.length, fileName: id, platformRef: null };
  };
  /** Stores `bytes` as the attachment of a new (old-dated) allowlisted message; its id. */
  const stored = (bytes: Uint8Array, mime: string): string => {
    const a = staged(bytes, mime);
    t.seed([inbound({ attachments: [a], timestampMs: Date.UTC(2020, 0, 1) })]);
    return a.id;
  };
  return { t, env, staged, stored, stop: async () => void (await t.svc.app.stop(true)) };
}

/**
 * attachmentService() and a `gw mcp --extended` client on it (`extra` added to the client's environment);
 * after the file's tests every MCP client is closed and the service stopped. Call it at module scope.
 */
export async function attachmentsOverMcp(extra: Record<string, string> = {}) {
  const s = await attachmentService();
  const gw = await connectMcp(["--extended"], { ...s.env, ...extra });
  afterAll(async () => {
    await closeAll();
    await s.stop();
  });
  return { s, gw, stored: s.stored };
}

export const info = (r: ToolResult) => JSON.parse(r.content[0]?.text ?? "{}") as Record<string, unknown>;
export const decoded = (r: ToolResult) => Buffer.from(r.content[1]?.data ?? "", "base64");
export const cacheDir = (h: McpHandle) => join(h.tmp, `gw-mcp-${process.getuid?.()}`);
