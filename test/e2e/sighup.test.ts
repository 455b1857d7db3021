/** SIGHUP reloads the allowlist of a live `gw serve` without a restart; an invalid file keeps the old list. */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, isolatedEnv, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const entry = (id: string, person: string) =>
  `[[entry]]\nsource = "device_messenger"\nid = "${id}"\nperson_id = "${person}"\n`;

test("SIGHUP on a live process: valid file applied, invalid file logged and ignored", async () => {
  const dir = tempDir();
  const env = isolatedEnv(dir, { GW_BIND_PORT: String(freePort()) });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, entry("+15555550100", "ann"));
  const gw = spawnGw(["serve"], env);
  try {
    await waitForHealth(Number(env.GW_BIND_PORT));
    const links = () => {
      const db = new Database(env.GW_DB_PATH as string, { readonly: true });
      try {
        return db.query("SELECT person_id, source FROM identity_links ORDER BY person_id").all();
      } finally {
        db.close();
      }
    };
    expect(links()).toEqual([{ person_id: "ann", source: "device_messenger" }]);

    writeFileSync(
      env.GW_ALLOWLIST_PATH as string,
      entry("+15555550100", "ann") + entry("ann@example.com", "ann") + entry("+15555550101", "bob"),
    );
    gw.proc.kill("SIGHUP");
    await waitFor(() => (links().length === 2 ? true : undefined), "identity links after SIGHUP");
    expect(links()).toEqual([
      { person_id: "ann", source: "device_messenger" },
      { person_id: "bob", source: "device_messenger" },
    ]);

    writeFileSync(env.GW_ALLOWLIST_PATH as string, '[[entry]]\nsource = "fax"\n');
    gw.proc.kill("SIGHUP");
    const logFile = join(env.GW_LOG_DIR as string, "current.log");
    await waitFor(
      () => (readFileSync(logFile, "utf8").includes("allowlist reload failed") ? true : undefined),
      "reload failure log",
    );
    expect(links()).toHaveLength(2);
    expect(readFileSync(logFile, "utf8")).toContain('entry 1: field \\"source\\" must be one of');
    expect((await fetch(`http://127.0.0.1:${env.GW_BIND_PORT}/healthz`)).status).toBe(200);
  } finally {
    gw.proc.kill("SIGTERM");
    expect(await gw.exited).toBe(0);
  }
});
