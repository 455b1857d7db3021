/**
 * The README's first run on the playground, as a newcomer follows it (issue 31): in a clean copy of this
 * repository (`git archive` of HEAD: exactly what a clone checks out), the README's set-up command
 * (`bun install && bun run demo`) starts the demo; then every command the banner prints is run as printed,
 * in bash, in order, each block with the banner's `export GW_BEARER_TOKEN=…` line: the curl lines, the
 * events long poll, the edit of gw's own post, mark_read, and `gw quarantine` / `gw allow` with the printed
 * exports and alias. Each succeeds; then the stranger's next message reaches agents, and one Ctrl-C (a
 * SIGINT to the whole process group) stops it all with exit 0.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, ROOT, waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const STRANGER = "+15555550199";

/** The README's demo set-up command (its first code block's line that runs the demo), comment dropped. */
function readmeDemoCommand(): string {
  const line = readFileSync(join(ROOT, "README.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("bun install && bun run demo"));
  if (!line) throw new Error("the README has no `bun install && bun run demo` line");
  return line.replace(/#.*$/, "").trim();
}

/** The banner's command blocks: each heading (an unindented line ending in ":") and the commands under it. */
function blocks(banner: string): { heading: string; script: string }[] {
  const out: { heading: string; script: string }[] = [];
  let current: { heading: string; lines: string[] } | null = null;
  for (const line of banner.split("\n")) {
    if (/^\S.*:$/.test(line)) {
      current = { heading: line, lines: [] };
      out.push({ heading: line, script: "" });
    } else if (current && /^ {2}\S/.test(line)) current.lines.push(line.trim());
    else if (current && /^ {4}\S/.test(line) && current.lines.length > 0) current.lines.push(line.trim());
    else if (line.trim() === "") current = null;
    if (current) (out.at(-1) as { script: string }).script = current.lines.join("\n");
  }
  // A block of commands (not a description that happens to be indented).
  return out.filter((b) => /^(curl |ID=|export |alias |gw )/.test(b.script));
}

function bash(script: string, env: Record<string, string>): { code: number; out: string; err: string } {
  const r = Bun.spawnSync(["bash", "-O", "expand_aliases", "-c", script], {
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

const json = (s: string): Record<string, unknown> | null => {
  try {
    return JSON.parse(s.trim().split("\n").at(-1) ?? "") as Record<string, unknown>;
  } catch {
    return null;
  }
};
const items = (r: Record<string, unknown> | null, key: string) => (r?.[key] as unknown[] | undefined) ?? [];

/** What each printed block must answer (by its heading's start); every block is checked. */
const EXPECT: [string, (out: string) => boolean][] = [
  ["Read what your agent would see", (o) => items(json(o), "messages").length > 0],
  ["Follow edits, unsends and reactions", (o) => items(json(o), "events").length > 0],
  ["See who is quarantined", (o) => items(json(o), "messages").length > 0],
  ["Reply to the friend on iMessage", (o) => /"message_id":"msg_/.test(o)],
  ["Post in the Discord channel #general", (o) => /"message_id":"msg_/.test(o)],
  ["Post in #general, then edit", (o) => typeof json(o)?.edited_at === "string"],
  ["Search both platforms", (o) => items(json(o), "messages").length > 0],
  ["React 👍 on Discord", (o) => json(o)?.removed === false],
  ["Mark the oldest unread message read", (o) => json(o)?.marked_count === 1],
  [
    "Let the stranger through",
    (o) =>
      new RegExp(`^ {2}\\${STRANGER}( \\(Jamie Rivera\\))?: `, "m").test(o) &&
      /gw serve \(pid \d+\) reloads the allowlist now/.test(o),
  ],
];

test("the README's set-up command starts the demo, and every line of its banner works as printed", async () => {
  const clean = tempDir();
  const archive = Bun.spawnSync(["sh", "-c", `git -C "${ROOT}" archive HEAD | tar -x -C "${clean}"`]);
  expect(archive.exitCode).toBe(0);
  const port = freePort();
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tempDir(), GW_BIND_PORT: String(port) };
  const demo = Bun.spawn(["bash", "-c", `${readmeDemoCommand()} --interval 0.2`], {
    cwd: clean,
    env,
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });
  let stdout = "";
  void (async () => {
    for await (const chunk of demo.stdout) stdout += new TextDecoder().decode(chunk);
  })();
  try {
    const banner = await waitFor(
      () => (stdout.includes("Press Ctrl-C") ? stdout : undefined),
      "the demo's banner",
      60_000,
    );
    const token = /^ {2}export GW_BEARER_TOKEN=\S+$/m.exec(banner)?.[0].trim() as string;
    expect(token).toBeDefined();
    const printed = blocks(banner);
    for (const [heading] of EXPECT)
      expect(printed.map((b) => b.heading).some((h) => h.startsWith(heading))).toBe(true);
    for (const b of printed) {
      const check = EXPECT.find(([h]) => b.heading.startsWith(h))?.[1];
      if (!check) throw new Error(`the banner printed a block no check covers: ${b.heading}`);
      // Some answers need the demo to have played a few lines first: each block is retried until it holds.
      await waitFor(
        () => {
          const r = bash(`set -e\n${token}\n${b.script}`, env);
          return r.code === 0 && check(r.out) ? true : undefined;
        },
        `"${b.heading}" as printed`,
        20_000,
      );
    }
    // The stranger is allowed now: their next message reaches agents, linked to the new person.
    await waitFor(
      () => {
        const r = bash(
          `${token}\ncurl -s -H "Authorization: Bearer $GW_BEARER_TOKEN" -H "X-Agent-ID: newcomer" "http://127.0.0.1:${port}/messages/unread?limit=100"`,
          env,
        );
        const list = items(json(r.out), "messages") as { sender: { id: string; person_id: string | null } }[];
        return list.some((m) => m.sender.id === STRANGER && m.sender.person_id === "stranger")
          ? true
          : undefined;
      },
      "the stranger's next message as an allowed one",
      20_000,
    );
  } finally {
    process.kill(-demo.pid, "SIGINT");
  }
  expect(await demo.exited).toBe(0);
}, 120_000);
