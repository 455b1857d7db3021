/**
 * The request-size rule over real HTTP, on the compiled `gw serve` and on `gw receiver`: a body over the
 * limit is 401 without the bearer (not Bun's bare 413), then the error envelope with 413 and the limit;
 * a chunked body without a Content-Length is 411; bodies within the limit work as before; a request
 * with an empty Host header still gets the envelope.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { MAX_BODY_BYTES } from "../../src/http/app.ts";
import { MAX_DELIVERY_BYTES } from "../../src/receiver/app.ts";
import { stopAtEnd } from "../helpers/gw-processes.ts";
import {
  ensureBinary,
  freePort,
  type GwProcess,
  isolatedEnv,
  spawnGw,
  startServe,
  waitForHealth,
} from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const running = stopAtEnd();

/** A raw HTTP/1.1 exchange, so the body can be chunked or declared without being sent. */
function raw(port: number, head: string, body = ""): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(`${head}\r\n\r\n${body}`));
    let data = "";
    socket.on("data", (d) => {
      data += d.toString();
    });
    socket.on("end", () =>
      resolve({ status: Number(data.split(" ")[1]), text: data.slice(data.indexOf("\r\n\r\n") + 4) }),
    );
    socket.on("error", reject);
  });
}
const envelope = (text: string) =>
  JSON.parse(text) as { error: { code: string; details: Record<string, unknown> } };

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();
const serveEnv = isolatedEnv(tempDir(), { GW_BIND_PORT: String(freePort()) });
running.push(await startServe(serveEnv, { binary: true }));

describe("gw serve (compiled)", () => {
  const port = Number(serveEnv.GW_BIND_PORT);
  const token = serveEnv.GW_BEARER_TOKEN as string;
  const big = "x".repeat(MAX_BODY_BYTES + 1);
  const send = (headers: Record<string, string>, body: string) =>
    fetch(`http://127.0.0.1:${port}/messages/send`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  test("without the bearer, a body over the limit is 401 with the envelope", async () => {
    const res = await send({}, big);
    expect(res.status).toBe(401);
    expect(envelope(await res.text()).error.code).toBe("UNAUTHORIZED");
  });

  test("with the bearer it is 413 VALIDATION_FAILED naming the limit; a declared length alone is enough", async () => {
    const res = await send({ authorization: `Bearer ${token}` }, big);
    expect(res.status).toBe(413);
    expect(envelope(await res.text()).error).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { field: "body", reason: "too large", limit_bytes: MAX_BODY_BYTES },
    });
    const declared = await raw(
      port,
      `POST /messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 999999999999\r\nConnection: close`,
    );
    expect(declared.status).toBe(413);
    expect(envelope(declared.text).error.code).toBe("VALIDATION_FAILED");
  });

  test("a chunked body is 411; within the limit a send is validated as before", async () => {
    const chunked = await raw(
      port,
      `POST /messages/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close`,
      "2\r\n{}\r\n0\r\n\r\n",
    );
    expect(chunked.status).toBe(411);
    expect(envelope(chunked.text).error.details).toMatchObject({ field: "content-length" });
    const ok = await send(
      { authorization: `Bearer ${token}` },
      JSON.stringify({ channel_id: "+15555550100", text: "x" }),
    );
    expect(ok.status).toBe(404);
    expect(envelope(await ok.text()).error.code).toBe("CHANNEL_NOT_FOUND");
  });

  test("an empty Host header gets the envelope, never Bun's HTML error page (found by bun run fuzz)", async () => {
    const res = await raw(
      port,
      `POST /healthz HTTP/1.1\r\nHost: \r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close`,
      "{}",
    );
    expect(res.status).toBe(404);
    expect(envelope(res.text).error.code).toBe("NOT_FOUND");
  });
});

test("gw receiver: a delivery over its limit is 413 with the envelope, before anything is read", async () => {
  const dir = tempDir();
  const port = freePort();
  const gw = spawnGw(["receiver"], {
    ...isolatedEnv(dir),
    GW_WEBHOOK_SECRET: "body-limit-secret-0123",
    GW_RECEIVER_BIND_PORT: String(port),
    GW_RECEIVER_AGENT_BIN: "/bin/true",
  });
  running.push(gw);
  await waitForHealth(port);
  const res = await raw(
    port,
    `POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${MAX_DELIVERY_BYTES + 1}\r\nConnection: close`,
  );
  expect(res.status).toBe(413);
  expect(envelope(res.text).error).toMatchObject({
    code: "VALIDATION_FAILED",
    details: { limit_bytes: MAX_DELIVERY_BYTES },
  });
  // An empty Host header (found by bun run fuzz: the path was read with new URL(), which threw).
  const empty = await raw(port, "GET /nowhere HTTP/1.1\r\nHost: \r\nConnection: close");
  expect(empty.status).toBe(404);
  expect(envelope(empty.text).error.code).toBe("NOT_FOUND");
});

/** SIGTERM, then the exit code, or "hung" when the process is still running after `ms`. */
async function stopWithin(gw: GwProcess, ms: number): Promise<number | "hung"> {
  gw.proc.kill("SIGTERM");
  const hung = Bun.sleep(ms).then(() => "hung" as const);
  const code = await Promise.race([gw.exited, hung]);
  if (code === "hung") gw.proc.kill("SIGKILL");
  return code;
}

test("a body refused unread (401, 413, 404) does not hold up a graceful stop (found by bun run fuzz)", async () => {
  const body = "x".repeat(2 * MAX_DELIVERY_BYTES);
  const env = isolatedEnv(tempDir(), { GW_BIND_PORT: String(freePort()) });
  const serve = await startServe(env);
  const base = `http://127.0.0.1:${env.GW_BIND_PORT}`;
  const post = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: "POST", headers, body }).then((r) => r.status);
  expect(await post("/messages/send")).toBe(401);
  expect(await post("/messages/send", { authorization: `Bearer ${env.GW_BEARER_TOKEN}` })).toBe(413);
  expect(await stopWithin(serve, 5_000)).toBe(0);

  const port = freePort();
  const receiver = spawnGw(["receiver"], {
    ...isolatedEnv(tempDir()),
    GW_WEBHOOK_SECRET: "body-limit-secret-0123",
    GW_RECEIVER_BIND_PORT: String(port),
    GW_RECEIVER_AGENT_BIN: "/bin/true",
  });
  await waitForHealth(port);
  const res = await fetch(`http://127.0.0.1:${port}/elsewhere`, { method: "POST", body });
  expect(res.status).toBe(404);
  expect(await stopWithin(receiver, 5_000)).toBe(0);
});
