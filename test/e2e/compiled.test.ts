/**
 * The compiled binary (`bun run build` -> dist/gw), as users run it: version, configuration error exit
 * code, `serve` answering /healthz and enforcing the bearer, and a clean stop on SIGTERM.
 */
import { expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import pkg from "../../package.json" with { type: "json" };
import { VIEWER_FILES } from "../../src/http/viewer-files.ts";
import { ensureBinary, freePort, isolatedEnv, spawnGw, waitForHealth } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();

test("dist/gw --version", async () => {
  const gw = spawnGw(["--version"], {}, { binary: true });
  expect(await gw.exited).toBe(0);
  expect(gw.output().stdout).toBe(`gw ${pkg.version}\n`);
});

test("dist/gw serve without a token exits 2", async () => {
  const { GW_BEARER_TOKEN: _, ...env } = isolatedEnv(tempDir());
  const gw = spawnGw(["serve"], env, { binary: true });
  expect(await gw.exited).toBe(2);
  expect(gw.output().stderr).toContain("GW_BEARER_TOKEN");
});

test("dist/gw serve answers /healthz, enforces the bearer, logs to a 0600 file and stops cleanly", async () => {
  const env = isolatedEnv(tempDir(), { GW_BIND_PORT: String(freePort()) });
  const gw = spawnGw(["serve"], env, { binary: true });
  try {
    const health = await waitForHealth(Number(env.GW_BIND_PORT));
    expect(health).toMatchObject({
      status: "ok",
      version: pkg.version,
      webhooks: { queue_depth: 0, dead: 0 },
    });
    const denied = await fetch(`http://127.0.0.1:${env.GW_BIND_PORT}/messages/unread`);
    expect(denied.status).toBe(401);
    expect(statSync(`${env.GW_LOG_DIR}/current.log`).mode & 0o777).toBe(0o600);
    expect(statSync(env.GW_DB_PATH as string).mode & 0o777).toBe(0o600);
  } finally {
    gw.proc.kill("SIGTERM");
    expect(await gw.exited).toBe(0);
  }
  expect(gw.output().stderr).toContain("gw serve listening on");
  expect(gw.output().stderr).not.toContain(env.GW_BEARER_TOKEN as string);
});

test("dist/gw serves /docs and /redoc with the viewers' files as the packages ship them (embedded compressed)", async () => {
  const env = isolatedEnv(tempDir(), { GW_BIND_PORT: String(freePort()) });
  const gw = spawnGw(["serve"], env, { binary: true });
  const shipped = (spec: string) => readFileSync(Bun.resolveSync(spec, import.meta.dir), "utf8");
  try {
    await waitForHealth(Number(env.GW_BIND_PORT));
    const page = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${env.GW_BIND_PORT}${path}`, {
        headers: { authorization: `Bearer ${env.GW_BEARER_TOKEN}` },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    // includes() rather than toContain(): a failure would print megabytes.
    const inlined = (spec: string) => shipped(spec).replace(/<\/script/gi, "<\\/script");
    const docs = await page("/docs");
    expect(docs.includes(`<style>${shipped(VIEWER_FILES.swaggerCss)}</style>`)).toBe(true);
    expect(docs.includes(`<script>${inlined(VIEWER_FILES.swaggerJs)}</script>`)).toBe(true);
    const redoc = await page("/redoc");
    expect(redoc.includes(`<script>${inlined(VIEWER_FILES.redocJs)}</script>`)).toBe(true);
    expect(redoc).toContain('"openapi":"3.1.0"');
  } finally {
    gw.proc.kill("SIGTERM");
    expect(await gw.exited).toBe(0);
  }
});
