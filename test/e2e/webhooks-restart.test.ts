/**
 * Webhook durability with a real `gw serve` process: deliveries pending when the service is killed
 * with SIGKILL resume after restart with the same delivery ids, at most one extra attempt each, and
 * quarantined messages are never pushed. Then the operator commands list and re-drive dead rows.
 */
import { afterAll, expect, test } from "bun:test";
import { openStore } from "../../src/store/store.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { inbound, seedStore } from "../helpers/messages.ts";
import { freePort, isolatedEnv, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

let failing = true;
const sink = webhookSink(() => (failing ? 500 : 204));
afterAll(() => sink.stop());

const dir = tempDir();
const env = isolatedEnv(dir, {
  GW_WEBHOOK_URL: sink.url,
  GW_WEBHOOK_SECRET: "restart-secret-0123456789",
  GW_WEBHOOK_RETRY_DELAYS_MS: "150,150,150,150",
});

function deliveries() {
  const store = openStore(env.GW_DB_PATH as string);
  try {
    return store.deliveries.list(null, 100);
  } finally {
    store.close();
  }
}

test("kill -9 with deliveries pending: they complete after restart, same ids, at most one extra attempt", async () => {
  seedStore(
    env,
    [inbound(), inbound(), inbound(), inbound({ sender: { id: "+15555550999", displayName: "stranger" } })],
    { webhooks: true, cursor: "4" },
  );
  await Bun.write(
    env.GW_ALLOWLIST_PATH as string,
    '[[entry]]\nsource = "device_messenger"\nid = "+15555550100"\nperson_id = "ann"\n',
  );

  const port = String(freePort());
  const first = spawnGw(["serve"], { ...env, GW_BIND_PORT: port });
  await waitFor(() => (sink.hits.length >= 4 ? true : undefined), "failing attempts");
  first.proc.kill("SIGKILL");
  await first.exited;
  const before = deliveries();
  expect(before).toHaveLength(3);
  for (const d of before) expect(d.status).toBe("pending");
  const attemptsBefore = new Map(before.map((d) => [d.id, d.attempt_count]));

  failing = false;
  const hitsBefore = sink.hits.length;
  const second = spawnGw(["serve"], { ...env, GW_BIND_PORT: port });
  try {
    await waitForHealth(Number(port));
    await waitFor(
      () => (deliveries().every((d) => d.status === "delivered") ? true : undefined),
      "all delivered",
    );
  } finally {
    second.proc.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }
  const after = deliveries();
  for (const d of after) {
    expect(d.attempt_count).toBeGreaterThan(attemptsBefore.get(d.id) ?? 0);
    expect(d.attempt_count).toBeLessThanOrEqual(5);
  }
  const ids = new Set(sink.hits.map((h) => h.headers["x-gw-delivery-id"]));
  expect([...ids].sort()).toEqual(after.map((d) => d.id).sort());
  const resent = sink.hits.slice(hitsBefore).map((h) => h.headers["x-gw-delivery-id"]);
  expect(new Set(resent).size).toBe(3);
  expect(resent.length).toBeLessThanOrEqual(6);
});

test("gw webhooks list and redeliver", async () => {
  const store = openStore(env.GW_DB_PATH as string);
  const [d] = store.deliveries.list(null, 1);
  store.deliveries.recordAttempt(
    d?.id as string,
    { status: "dead", attempts: 5, nextAt: null, code: 500, error: "HTTP 500" },
    Date.now(),
  );
  store.close();
  const run = async (...args: string[]) => {
    const gw = spawnGw(["webhooks", ...args], env);
    const code = await gw.exited;
    return { code, ...gw.output() };
  };
  const dead = await run("list", "--status", "dead");
  expect(dead.code).toBe(0);
  expect(dead.stdout).toContain("0 pending, 1 dead");
  expect(dead.stdout).toContain(`${d?.id}  dead`);
  expect((await run("redeliver", "--all-dead")).stdout).toBe("1 dead deliveries queued again\n");
  expect(deliveries().find((x) => x.id === d?.id)).toMatchObject({ status: "pending", attempt_count: 0 });
  expect((await run("redeliver", d?.id as string)).code).toBe(0);
  const missing = await run("redeliver", "nope");
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("no delivery nope");
  expect((await run("list", "--status", "bogus")).code).toBe(2);
});
