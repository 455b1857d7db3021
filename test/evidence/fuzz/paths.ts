/**
 * Hostile attachment `path`s for POST /messages/send on the iMessage channel (reliability.md §5, B8),
 * through the real service, the real iMessage connector and the Messages stand-in as osascript. The home
 * planted with canaries and the corpus of cases are path-corpus.ts. Each case must be refused with its
 * code and rule, the stand-in must be called for none of them, and no staged copy may hold a canary.
 * Positive controls show the same harness does see a file that is sent. path-swap-after-check swaps the
 * file between the check and its use, at the service's "sending a local file" log line (the last thing
 * before the copy); path-swap-race (path-race.ts) flips a directory into a symlink while the check runs.
 */
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import type { Logger } from "../../../src/core/ports.ts";
import { openChatDbWriter } from "../../../src/demo/chatdb-writer.ts";
import { recordingLogger } from "../../helpers/logger.ts";
import { waitFor } from "../../helpers/process.ts";
import { AUTH, DM, deviceService } from "./harness.ts";
import { type Case, corpus, MAX_BYTES, NFC_DATA, plantHome, rootsCorpus } from "./path-corpus.ts";
import { swapRace } from "./path-race.ts";
import type { FuzzItem, Outcome } from "./types.ts";

const FRIEND_CHAT = `any;-;${DM}`;

/** A home with chat.db and a running device service that has seen the friend's chat. */
async function device(home: string, env: Record<string, string> = {}, log?: Logger) {
  const chatDbPath = join(home, "Library/Messages/chat.db");
  mkdirSync(join(home, "Library/Messages"), { recursive: true });
  const writer = openChatDbWriter(chatDbPath);
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: DM, participants: [DM] });
  const d = await deviceService({
    dir: home,
    chatDbPath,
    env: {
      GW_ATTACHMENT_MAX_BYTES: String(MAX_BYTES),
      GW_DB_PATH: join(home, NFC_DATA, "gw.db"),
      GW_ATTACHMENT_DIR: join(home, NFC_DATA, "attachments"),
      ...env,
    },
    ...(log ? { log } : {}),
  });
  writer.message({ chatGuid: FRIEND_CHAT, from: DM, text: "hi" });
  writer.close();
  await waitFor(
    () => (d.svc.store.channels.get(DM) ? true : undefined),
    "the friend's chat to be ingested",
    10_000,
  );
  const standinLog = join(home, "standin.log");
  const calls = () =>
    existsSync(standinLog) ? readFileSync(standinLog, "utf8").split("\n").filter(Boolean) : [];
  const send = async (c: { path: string; url?: boolean }) => {
    const res = await d.svc.app.handle(
      new Request("http://localhost/messages/send", {
        method: "POST",
        headers: { ...AUTH, "content-type": "application/json" },
        body: JSON.stringify({
          channel_id: DM,
          text: "",
          attachments: [c.url ? { url: c.path } : { path: c.path }],
        }),
      }),
    );
    return {
      status: res.status,
      body: (await res.json()) as { error?: { code: string; details: Record<string, unknown> } },
    };
  };
  return { ...d, send, calls };
}

/** Every staged copy gw handed to Messages, with its content. */
function stagedCopies(home: string): { path: string; content: string }[] {
  const root = join(home, "Library/Messages/Attachments/gw");
  if (!existsSync(root)) return [];
  const out: { path: string; content: string }[] = [];
  for (const d of readdirSync(root))
    for (const f of readdirSync(join(root, d)))
      out.push({ path: join(root, d, f), content: readFileSync(join(root, d, f), "utf8") });
  return out;
}

function judge(
  c: Case,
  r: { status: number; body: { error?: { code: string; details: Record<string, unknown> } } },
): string | null {
  const e = r.body.error;
  if (c.rules.includes("MESSAGE_NOT_FOUND"))
    return r.status === 404 && e?.code === "MESSAGE_NOT_FOUND"
      ? null
      : `${r.status} ${JSON.stringify(r.body)}`;
  const field = c.url ? "attachments.0.url" : "attachments.0.path";
  if (
    r.status !== 400 ||
    e?.code !== "VALIDATION_FAILED" ||
    e.details.field !== field ||
    !c.rules.includes(String(e.details.rule))
  )
    return `${r.status} ${JSON.stringify(r.body).slice(0, 300)} (wanted 400 ${c.rules.join("|")} on ${field})`;
  return null;
}

export const pathCorpus: FuzzItem = {
  id: "attachment-paths",
  tried:
    "Hostile attachment paths for POST /messages/send (iMessage, real connector and Messages stand-in): symlinks (direct, chained, relative, directory) into ~/.ssh, ~/.gnupg, ~/.aws, ~/.config/gw, ~/Library/Keychains, ~/Library/Messages and gw's data dir; chat.db, gw.db and its WAL, logs, allowlist, stored attachments; `..` traversal, //, /proc/self/root, /proc/self/fd and /dev/fd aliases; relative, ~, empty, file:, %-encoded; NUL bytes; case and NFD variants; FIFO, /dev/zero, /dev/null, /dev/urandom, /dev/full, a socket, directories; over the size cap and a 10 GiB sparse file; names with newlines; a sibling-prefix root (~/outbox-evil) and escapes from GW_SEND_PATH_ROOTS; adapter-url lookalikes",
  held: "every case refused with its code and rule (400 VALIDATION_FAILED naming attachments.0.path and the rule; 404 MESSAGE_NOT_FOUND for an unknown attachment url); the stand-in called for none; no staged copy holds a canary byte; the positive controls (an ordinary file, ~/.ssh-evil, a name with a newline) are sent",
  async run(): Promise<Outcome> {
    const planted = plantHome("gw-fuzz-paths-");
    const { home } = planted;
    const d = await device(home);
    const failures: string[] = [];
    let cases = 0;
    try {
      for (const c of corpus(home, planted.D)) {
        cases++;
        const before = d.calls().length;
        const r = await d.send(c);
        const bad = judge(c, r);
        if (bad) failures.push(`${c.what} (${JSON.stringify(c.path)}): ${bad}`);
        if (d.calls().length !== before) failures.push(`${c.what}: the Messages stand-in was called`);
      }
      // Positive controls: the harness sees a file that is sent.
      for (const [what, path, content] of [
        ["an ordinary file", planted.D("ok.txt"), "fine"],
        ["~/.ssh-evil (a sibling of ~/.ssh)", join(home, ".ssh-evil/key.pub"), "public"],
        ["a name with a newline", planted.D("line\nbreak.txt"), "fine"],
      ] as const) {
        const before = d.calls().length;
        const r = await d.send({ path });
        if (r.status !== 200) failures.push(`control ${what}: ${r.status} ${JSON.stringify(r.body)}`);
        else if (d.calls().length !== before + 1)
          failures.push(`control ${what}: the stand-in was not called once`);
        else if (
          !stagedCopies(home).some((s) => s.content === content && basename(s.path) === basename(path))
        )
          failures.push(`control ${what}: no staged copy with its content`);
      }
    } finally {
      planted.stopSocket();
      await d.svc.close();
    }
    // The same home with GW_SEND_PATH_ROOTS.
    const roots = await device(home, { GW_SEND_PATH_ROOTS: join(home, "outbox") });
    try {
      for (const c of rootsCorpus(home)) {
        cases++;
        const before = roots.calls().length;
        const r = await roots.send(c);
        const bad = judge(c, r);
        if (bad) failures.push(`${c.what}: ${bad}`);
        if (roots.calls().length !== before) failures.push(`${c.what}: the Messages stand-in was called`);
      }
      const ok = await roots.send({ path: join(home, "outbox/ok.txt") });
      if (ok.status !== 200) failures.push(`control: a file inside the root: ${ok.status}`);
    } finally {
      await roots.svc.close();
    }
    for (const s of stagedCopies(home))
      if (s.content.includes("CANARY")) failures.push(`a staged copy holds a canary: ${s.path}`);
    rmSync(join(home, "Documents/sparse.bin"), { force: true });
    return { cases, failures };
  },
};

/** A logger that runs `hook` on every entry (synchronously, as the service logs). */
function hookedLogger(hook: (msg: string, obj: object) => void): Logger {
  const base = recordingLogger();
  const wrap = (l: Logger): Logger => ({
    debug: (o, m) => l.debug(o, m),
    info: (o, m) => {
      hook(m ?? "", o);
      l.info(o, m);
    },
    warn: (o, m) => l.warn(o, m),
    error: (o, m) => l.error(o, m),
    child: () => wrap(l),
  });
  return wrap(base);
}

export const swapAfterCheck: FuzzItem = {
  id: "path-swap-after-check",
  tried:
    'The checked file changed between the check and its use, at the service\'s last step before the copy (its "sending a local file" log line): its directory renamed away and replaced by a symlink to ~/.ssh; the file replaced by a symlink to ~/.aws/credentials; the file grown far past the size cap; the file truncated',
  held: "no canary byte reaches a staged copy or the Messages stand-in; a staged copy never exceeds the checked size (≤ GW_ATTACHMENT_MAX_BYTES); every answer is 200 or the error envelope (no 5xx)",
  async run(): Promise<Outcome> {
    const { home, D } = plantHome("gw-fuzz-swap-");
    const failures: string[] = [];
    mkdirSync(D("flip"), { recursive: true });
    let action: (() => void) | null = null;
    const log = hookedLogger((msg) => {
      if (msg === "sending a local file" && action) {
        const a = action;
        action = null;
        a();
      }
    });
    const d = await device(home, {}, log);
    const variants: [string, string, () => void][] = [
      [
        "directory replaced by a symlink to ~/.ssh",
        "flip/id_ed25519",
        () => {
          renameSync(D("flip"), D("flip.away"));
          symlinkSync(join(home, ".ssh"), D("flip"));
        },
      ],
      [
        "file replaced by a symlink to ~/.aws/credentials",
        "swapped.txt",
        () => {
          rmSync(D("swapped.txt"));
          symlinkSync(join(home, ".aws/credentials"), D("swapped.txt"));
        },
      ],
      [
        "file replaced by a hard link to ~/.gnupg/secring.gpg",
        "linked.txt",
        () => {
          rmSync(D("linked.txt"));
          linkSync(join(home, ".gnupg/secring.gpg"), D("linked.txt"));
        },
      ],
      [
        "file grown past the cap",
        "growing.txt",
        () => writeFileSync(D("growing.txt"), "G".repeat(MAX_BYTES * 50)),
      ],
      ["file truncated", "shrinking.txt", () => truncateSync(D("shrinking.txt"), 0)],
    ];
    let cases = 0;
    try {
      for (const [what, rel, swap] of variants) {
        cases++;
        rmSync(D("flip"), { recursive: true, force: true });
        rmSync(D("flip.away"), { recursive: true, force: true });
        mkdirSync(D("flip"), { recursive: true });
        writeFileSync(D("flip/id_ed25519"), "BENIGN");
        for (const f of ["swapped.txt", "linked.txt", "growing.txt", "shrinking.txt"]) {
          rmSync(D(f), { force: true });
          writeFileSync(D(f), "BENIGN");
        }
        action = swap;
        const r = await d.send({ path: D(rel) });
        if (action !== null) failures.push(`${what}: the send never reached its copy (${r.status})`);
        if (r.status >= 500 || (r.status !== 200 && r.status !== 400))
          failures.push(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    } finally {
      await d.svc.close();
    }
    for (const s of stagedCopies(home)) {
      if (s.content.includes("CANARY"))
        failures.push(`a staged copy holds a canary: ${basename(s.path)} = ${s.content.slice(0, 60)}`);
      if (s.content.length > MAX_BYTES)
        failures.push(`a staged copy of ${s.content.length} bytes (cap ${MAX_BYTES})`);
    }
    return { cases, failures };
  },
};

export const pathItems = [pathCorpus, swapAfterCheck, swapRace];
