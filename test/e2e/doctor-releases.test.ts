/**
 * `gw doctor --json` on the chat.db of each of six macOS releases (shared/fixtures/chatdb/versions, built by
 * chatdb-releases.ts): the chat-db check is ok and names the release its `message` columns point to.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import type { Check } from "../../src/doctor/check.ts";
import { chatDbOfRelease, RELEASES, type ReleaseName } from "../helpers/chatdb-releases.ts";
import { freePort, isolatedEnv, spawnGw } from "../helpers/process.ts";
import { ALLOWLIST } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

const LINES: Record<ReleaseName, string> = {
  "big-sur": "macOS 11 Big Sur or older schema, 74 message columns",
  monterey: "macOS 12 Monterey schema, 75 message columns",
  ventura: "macOS 13 Ventura schema, 82 message columns",
  sonoma: "macOS 14 Sonoma schema, 88 message columns",
  sequoia: "macOS 15 Sequoia schema, 94 message columns",
  tahoe: "macOS 26 Tahoe schema, 95 message columns",
};

async function chatDbCheck(release: ReleaseName): Promise<{ path: string; check: Check | undefined }> {
  const dir = tempDir();
  const { path, writer } = chatDbOfRelease(release, dir);
  writer.close();
  const env = isolatedEnv(dir, {
    GW_BIND_PORT: String(freePort()),
    GW_CHAT_DB_PATH: path,
    GW_OSASCRIPT_PATH: "/bin/sh",
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const gw = spawnGw(["doctor", "--json"], env);
  await gw.exited;
  const report = JSON.parse(gw.output().stdout) as { checks: Check[] };
  return { path, check: report.checks.find((c) => c.id === "chat-db") };
}

test("the chat.db line names each release's schema", async () => {
  const found = await Promise.all(RELEASES.map(chatDbCheck));
  for (const [i, release] of RELEASES.entries()) {
    const { path, check } = found[i] as Awaited<ReturnType<typeof chatDbCheck>>;
    expect(check).toEqual({
      id: "chat-db",
      scope: "config",
      level: "ok",
      what: `chat.db readable at ${path} (${LINES[release]}; last ROWID 0)`,
    });
  }
});
