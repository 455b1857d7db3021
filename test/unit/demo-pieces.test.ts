/**
 * The demo's own pieces: its allowlist links the friend across both platforms (so loading it warns
 * about nothing), its script alternates platforms, and its webhook receiver verifies deliveries with
 * the receiver's own check (a signed one is printed, a forged one refused with the receiver's status).
 * The fake Discord ships in the binary but is loaded only by `gw demo`.
 */
import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllowlist } from "../../src/allowlist/parse.ts";
import { type ReceiverSink, startReceiverSink } from "../../src/demo/receiver-sink.ts";
import { demoAllowlist, FRIEND, PERSON_ID, preview, SCRIPT } from "../../src/demo/script.ts";
import { signedHeaders } from "../../src/webhooks/sign.ts";
import { ROOT } from "../helpers/process.ts";

let sink: ReceiverSink | null = null;
afterEach(async () => {
  await sink?.stop();
  sink = null;
});

test("the demo allowlist holds the friend on both platforms as one person", () => {
  const parsed = parseAllowlist(demoAllowlist("112233445566778899"));
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  expect(parsed.allowlist.entries.map((e) => [e.source, e.person_id])).toEqual([
    ["device_messenger", PERSON_ID],
    ["community_chat", PERSON_ID],
  ]);
  expect(parsed.allowlist.singleUsePersons).toEqual([]);
  expect(demoAllowlist("1")).toContain(FRIEND);
});

test("the script alternates platforms, has both outcomes on each, and the friend edits, unsends and reacts on each", () => {
  SCRIPT.forEach((line, i) => {
    expect(line.source).toBe(i % 2 === 0 ? "imessage" : "discord");
  });
  for (const source of ["imessage", "discord"]) {
    for (const from of ["friend", "stranger"])
      expect(
        SCRIPT.some((l) => l.source === source && l.from === from && "text" in l && !("change" in l)),
      ).toBe(true);
    for (const change of ["edit", "unsend", "react"])
      expect(SCRIPT.some((l) => l.source === source && "change" in l && l.change === change)).toBe(true);
  }
});

test("preview flattens and shortens", () => {
  expect(preview("a\n  b")).toBe('"a b"');
  expect(preview("x".repeat(100), 10)).toBe(`"${"x".repeat(9)}…"`);
});

test("the receiver sink prints verified deliveries and refuses forged ones", async () => {
  const lines: string[] = [];
  sink = startReceiverSink({
    secret: "s3cret",
    print: (l) => lines.push(l),
    label: (id) => (id === "community_chat:channel:1" ? "#general" : null),
  });
  const body = JSON.stringify({
    source: "community_chat",
    channel_id: "community_chat:channel:1",
    sender: { id: "9", display_name: "Demo Friend" },
    text: "Morning all!",
  });
  const headers = signedHeaders("s3cret", "d-1", Math.floor(Date.now() / 1000), body);
  const ok = await fetch(sink.url, { method: "POST", headers: { ...headers }, body });
  expect(ok.status).toBe(204);
  expect(lines).toEqual([
    `webhook   d-1  ${"community_chat".padEnd(16)}  ${"#general".padEnd(15)}  Demo Friend: "Morning all!"`,
  ]);

  const forged = await fetch(sink.url, {
    method: "POST",
    headers: { ...headers },
    body: body.replace("Morning", "Evening"),
  });
  expect(forged.status).toBe(401);
  expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
  expect(lines[1]).toStartWith("webhook   refused (401)");
  const unsigned = await fetch(sink.url, { method: "POST", body });
  expect(unsigned.status).toBe(400);
});

test("the fake Discord is loaded only by gw demo, through a dynamic import", () => {
  const sources = [...new Bun.Glob("src/**/*.ts").scanSync({ cwd: ROOT })]
    .filter((f) => !f.startsWith("src/demo/fake-discord/"))
    .map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
  const importers = (re: RegExp) => sources.filter((s) => re.test(s.text)).map((s) => s.file);
  expect(importers(/from\s+["'][^"']*fake-discord\//)).toEqual(["src/demo/discord-scene.ts"]);
  expect(importers(/^import\s+(?!type\b)[^;]*from\s+["'][^"']*discord-scene\.ts["']/m)).toEqual([]);
  expect(importers(/import\(\s*["'][^"']*discord-scene\.ts["']\s*\)/)).toEqual(["src/commands/demo.ts"]);
});
