/**
 * Hostile attachment `path`s for POST /messages/send on the iMessage channel (reliability.md §5, B8),
 * through the real service, the real iMessage connector and the Messages stand-in as osascript.
 * A home directory is planted with canary files in every denied place (~/.ssh, ~/.gnupg, ~/.aws,
 * ~/.config/gw, ~/Library/Keychains, ~/Library/Messages with chat.db, gw's data dir with its database,
 * attachments, logs and allowlist) and the corpus tries symlinks into them, `..` traversal, relative
 * paths, NUL bytes, %-encoding, case and NFC/NFD variants, FIFOs, devices, a socket, directories, files
 * over GW_ATTACHMENT_MAX_BYTES, names with newlines, /proc and /dev/fd aliases, sibling-prefix roots.
 * Each case must be refused with its code and rule, the stand-in must be called for none of them, and no
 * staged copy may hold a canary. Positive controls show the same harness does see a file that is sent.
 * Two more items swap the file between the check and its use: deterministically (at the service's
 * "sending a local file" log line, the last thing before the copy) and with a racing process flipping
 * a directory into a symlink while the check runs.
 */
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import type { Logger } from "../../../src/core/ports.ts";
import { openChatDbWriter } from "../../../src/demo/chatdb-writer.ts";
import { checkLocalPath, type PathPolicy } from "../../../src/send/attachment-rules.ts";
import { recordingLogger } from "../../helpers/logger.ts";
import { ROOT, waitFor } from "../../helpers/process.ts";
import { tempDir } from "../../helpers/temp.ts";
import { AUTH, DM, deviceService } from "./harness.ts";
import type { FuzzItem, Outcome } from "./types.ts";

const MAX_BYTES = 1000;
const FRIEND_CHAT = `any;-;${DM}`;
const NFC_DATA = "Donn\u00e9es";
const NFD_DATA = "Donne\u0301es";

interface Case {
  what: string;
  path: string;
  /** Acceptable rules (400 VALIDATION_FAILED); or a 404 code for url cases. */
  rules: string[];
  url?: boolean;
}

/** Plants the home directory; returns the canaries (file -> secret content). */
function plant(home: string) {
  const canaries = new Map<string, string>();
  const secret = (rel: string) => {
    const p = join(home, rel);
    mkdirSync(join(p, ".."), { recursive: true });
    const c = `CANARY-${rel}-${crypto.randomUUID()}`;
    writeFileSync(p, c);
    canaries.set(p, c);
    return p;
  };
  for (const rel of [
    ".ssh/id_ed25519",
    ".ssh/evil\nname",
    ".gnupg/secring.gpg",
    ".aws/credentials",
    ".config/gw/allowlist.toml",
    "Library/Keychains/login.keychain-db",
    "Library/Messages/Attachments/ab/photo.jpg",
    `${NFC_DATA}/attachments/att_CANARY`,
    "logs/gw.2026-01-01.1.log",
  ])
    secret(rel);
  const doc = (rel: string, content = "fine") => {
    const p = join(home, "Documents", rel);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, content);
    return p;
  };
  doc("ok.txt");
  doc("line\nbreak.txt");
  doc("big.bin", "x".repeat(MAX_BYTES + 1));
  mkdirSync(join(home, ".ssh-evil"), { recursive: true });
  writeFileSync(join(home, ".ssh-evil/key.pub"), "public");
  const D = (rel: string) => join(home, "Documents", rel);
  symlinkSync(join(home, ".ssh/id_ed25519"), D("innocent.txt"));
  symlinkSync(join(home, ".aws"), D("aws"));
  symlinkSync(join(home, ".gnupg"), D("keys"));
  symlinkSync(D("innocent.txt"), D("chain1"));
  symlinkSync(D("chain1"), D("chain2"));
  symlinkSync(join(home, NFC_DATA), D("gwdata"));
  symlinkSync(join(home, "Library/Messages/chat.db"), D("chat.db"));
  symlinkSync("../.ssh/id_ed25519", D("relative-link"));
  symlinkSync(join(home, "Library/Keychains"), D("keychains"));
  symlinkSync(join(home, ".config/gw"), D("gwconfig"));
  symlinkSync(join(home, ".ssh"), D("ssh\nlink"));
  symlinkSync("/dev/zero", D("zero-link"));
  symlinkSync(join(home, ".ssh/id_ed25519"), D("%2e%2essh"));
  Bun.spawnSync(["mkfifo", D("fifo")]);
  truncateSync(doc("sparse.bin", ""), 10 * 1024 ** 3);
  // A Unix socket that is listening.
  const sock = Bun.listen({ unix: D("sock"), socket: { data() {} } });
  return { canaries, D, stopSocket: () => sock.stop(true) };
}

function corpus(home: string, D: (rel: string) => string): Case[] {
  const H = (rel: string) => join(home, rel);
  const denied = ["denied_location"];
  const nf = ["file_not_found"];
  const rel = ["absolute_path"];
  const notRegular = ["not_regular_file"];
  const gwDb = H(`${NFC_DATA}/gw.db`);
  const gwDbFd = (() => {
    for (const fd of readdirSync("/proc/self/fd")) {
      try {
        if (readlinkSync(`/proc/self/fd/${fd}`) === gwDb) return `/proc/self/fd/${fd}`;
      } catch {}
    }
    return null;
  })();
  const cases: Case[] = [
    { what: "a key in ~/.ssh", path: H(".ssh/id_ed25519"), rules: denied },
    { what: "the directory ~/.ssh", path: H(".ssh"), rules: denied },
    { what: "~/.ssh/ with a trailing slash", path: H(".ssh/"), rules: denied },
    { what: "a name with a newline in ~/.ssh", path: H(".ssh/evil\nname"), rules: denied },
    { what: "~/.gnupg", path: H(".gnupg/secring.gpg"), rules: denied },
    { what: "~/.aws", path: H(".aws/credentials"), rules: denied },
    { what: "~/.config/gw", path: H(".config/gw/allowlist.toml"), rules: denied },
    { what: "~/Library/Keychains", path: H("Library/Keychains/login.keychain-db"), rules: denied },
    { what: "chat.db", path: H("Library/Messages/chat.db"), rules: denied },
    { what: "a Messages attachment", path: H("Library/Messages/Attachments/ab/photo.jpg"), rules: denied },
    { what: "gw's database", path: gwDb, rules: denied },
    { what: "gw's database WAL", path: `${gwDb}-wal`, rules: denied },
    { what: "gw's data dir", path: H(NFC_DATA), rules: denied },
    { what: "a stored attachment", path: H(`${NFC_DATA}/attachments/att_CANARY`), rules: denied },
    { what: "gw's log file", path: H("logs/gw.2026-01-01.1.log"), rules: denied },
    { what: "gw's allowlist", path: H("allowlist.toml"), rules: denied },
    { what: "symlink to a key", path: D("innocent.txt"), rules: denied },
    { what: "directory symlink to ~/.aws", path: D("aws/credentials"), rules: denied },
    { what: "directory symlink to ~/.gnupg", path: D("keys/secring.gpg"), rules: denied },
    { what: "a chain of two symlinks", path: D("chain2"), rules: denied },
    { what: "symlink to gw's data dir", path: D("gwdata/gw.db"), rules: denied },
    { what: "symlink to chat.db", path: D("chat.db"), rules: denied },
    { what: "relative symlink ../.ssh/id_ed25519", path: D("relative-link"), rules: denied },
    { what: "symlink to ~/Library/Keychains", path: D("keychains/login.keychain-db"), rules: denied },
    { what: "symlink to ~/.config/gw", path: D("gwconfig/allowlist.toml"), rules: denied },
    { what: "symlink named with a newline", path: D("ssh\nlink/id_ed25519"), rules: denied },
    { what: "symlink named %2e%2essh", path: D("%2e%2essh"), rules: denied },
    { what: "traversal Documents/../.ssh", path: D("../.ssh/id_ed25519"), rules: denied },
    { what: "traversal with ./", path: D("./../.aws/credentials"), rules: denied },
    { what: "leading /../..", path: `/../..${H(".ssh/id_ed25519")}`, rules: denied },
    { what: "doubled slashes", path: `${D("")}/..//..//${basename(home)}//.ssh//id_ed25519`, rules: denied },
    { what: "~/.ssh/../.ssh", path: H(".ssh/../.ssh/id_ed25519"), rules: denied },
    { what: "through the sibling ~/.ssh-evil/..", path: H(".ssh-evil/../.ssh/id_ed25519"), rules: denied },
    { what: "// root prefix", path: `/${H(".ssh/id_ed25519")}`, rules: denied },
    { what: "/proc/self/root alias", path: `/proc/self/root${H(".ssh/id_ed25519")}`, rules: denied },
    {
      what: "/proc/<pid>/root alias",
      path: `/proc/${process.pid}/root${H(".aws/credentials")}`,
      rules: denied,
    },
    { what: "relative .ssh/id_ed25519", path: ".ssh/id_ed25519", rules: rel },
    { what: "relative ./Documents/ok.txt", path: "./Documents/ok.txt", rules: rel },
    { what: "relative ../.ssh", path: "../.ssh/id_ed25519", rules: rel },
    { what: "tilde (not expanded)", path: "~/.ssh/id_ed25519", rules: rel },
    { what: "empty path", path: "", rules: rel },
    { what: "a file: URL", path: `file://${H(".ssh/id_ed25519")}`, rules: rel },
    { what: "%-encoded absolute path", path: `%2F${H(".ssh/id_ed25519").slice(1)}`, rules: rel },
    { what: "NUL after an allowed file", path: `${D("ok.txt")}\u0000.png`, rules: rel },
    { what: "NUL after a key", path: `${H(".ssh/id_ed25519")}\u0000`, rules: rel },
    { what: "NUL between directories", path: `${D("ok.txt")}\u0000${H(".ssh/id_ed25519")}`, rules: rel },
    { what: "%2e%2e traversal (not decoded)", path: D("%2e%2e/.ssh/id_ed25519"), rules: nf },
    { what: "%-encoded ~/.ssh", path: H("%2essh/id_ed25519"), rules: nf },
    { what: "%2f inside a name", path: H(".ssh%2fid_ed25519"), rules: nf },
    { what: "newline + a denied path", path: `${D("ok.txt")}\n${H(".ssh/id_ed25519")}`, rules: nf },
    { what: "case variant ~/.SSH (Linux: another name)", path: H(".SSH/id_ed25519"), rules: nf },
    { what: "case variant ~/LIBRARY/Messages", path: H("LIBRARY/Messages/chat.db"), rules: nf },
    { what: "NFD spelling of gw's data dir", path: H(`${NFD_DATA}/gw.db`), rules: nf },
    { what: "a FIFO", path: D("fifo"), rules: notRegular },
    { what: "/dev/zero", path: "/dev/zero", rules: notRegular },
    { what: "/dev/null", path: "/dev/null", rules: notRegular },
    { what: "/dev/urandom", path: "/dev/urandom", rules: notRegular },
    { what: "/dev/full", path: "/dev/full", rules: notRegular },
    { what: "a symlink to /dev/zero", path: D("zero-link"), rules: notRegular },
    { what: "a listening Unix socket", path: D("sock"), rules: ["not_readable", "not_regular_file"] },
    { what: "a directory", path: D(""), rules: notRegular },
    { what: "the root directory", path: "/", rules: notRegular },
    { what: "/proc/self (a directory)", path: "/proc/self", rules: notRegular },
    { what: "a file one byte over the cap", path: D("big.bin"), rules: ["too_large"] },
    { what: "a 10 GiB sparse file", path: D("sparse.bin"), rules: ["too_large"] },
    { what: "a missing file", path: D("missing.txt"), rules: nf },
    {
      what: "url: a traversal",
      path: "/attachments/../../.ssh/id_ed25519",
      rules: ["adapter_hosted_url"],
      url: true,
    },
    {
      what: "url: file://",
      path: `file://${H(".ssh/id_ed25519")}`,
      rules: ["adapter_hosted_url"],
      url: true,
    },
    {
      what: "url: a foreign host",
      path: "https://example.com/attachments/att_00000000000000000000000000x",
      rules: ["adapter_hosted_url"],
      url: true,
    },
    {
      what: "url: an unknown attachment",
      path: "/attachments/att_00000000000000000000000000",
      rules: ["MESSAGE_NOT_FOUND"],
      url: true,
    },
  ];
  if (gwDbFd) cases.push({ what: "/proc/self/fd alias of gw's open database", path: gwDbFd, rules: denied });
  if (gwDbFd)
    cases.push({
      what: "/dev/fd alias of gw's open database",
      path: gwDbFd.replace("/proc/self/fd", "/dev/fd"),
      rules: denied,
    });
  return cases;
}

/** Same home layout, but with GW_SEND_PATH_ROOTS: sibling-prefix roots and escapes out of a root. */
function rootsCorpus(home: string): Case[] {
  const H = (rel: string) => join(home, rel);
  mkdirSync(H("outbox/sub"), { recursive: true });
  mkdirSync(H("outbox-evil"), { recursive: true });
  writeFileSync(H("outbox/ok.txt"), "fine");
  writeFileSync(H("outbox-evil/file.txt"), "CANARY-outbox-evil");
  writeFileSync(H("elsewhere.txt"), "CANARY-elsewhere");
  symlinkSync(H("elsewhere.txt"), H("outbox/out-link"));
  symlinkSync(H(".ssh/id_ed25519"), H("outbox/key-link"));
  symlinkSync(H("outbox-evil"), H("outbox/sub/evil-dir"));
  const out = ["outside_send_roots"];
  return [
    { what: "roots: a sibling-prefix directory ~/outbox-evil", path: H("outbox-evil/file.txt"), rules: out },
    { what: "roots: ~/outbox/../outbox-evil", path: H("outbox/../outbox-evil/file.txt"), rules: out },
    { what: "roots: a symlink in the root to a file outside", path: H("outbox/out-link"), rules: out },
    {
      what: "roots: a symlink in the root to ~/.ssh",
      path: H("outbox/key-link"),
      rules: ["denied_location"],
    },
    {
      what: "roots: a directory symlink to the sibling",
      path: H("outbox/sub/evil-dir/file.txt"),
      rules: out,
    },
    { what: "roots: a file outside every root", path: H("elsewhere.txt"), rules: out },
    { what: "roots: /etc/hostname", path: "/etc/hostname", rules: out },
  ];
}

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
    const failures: string[] = [];
    const home = tempDir("gw-fuzz-paths-");
    const planted = plant(home);
    const d = await device(home);
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
    const failures: string[] = [];
    const home = tempDir("gw-fuzz-swap-");
    const { D } = plant(home);
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

export const swapRace: FuzzItem = {
  id: "path-swap-race",
  tried:
    "A racing process flips a directory between a real directory and a symlink to ~/.ssh (rename away, symlink, unlink, rename back) while the path check runs in a loop on a file inside it (1.5 s; --long 150 s)",
  held: "every accepted check hands over a descriptor of the checked file (never a byte of the key); every refusal is 400 VALIDATION_FAILED with a rule (no raw error); accepted and refused both occur",
  async run({ scale }): Promise<Outcome> {
    const home = tempDir("gw-fuzz-race-");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    writeFileSync(join(home, ".ssh/id_ed25519"), "CANARY-SSH-KEY");
    mkdirSync(join(home, "Documents/flip"), { recursive: true });
    writeFileSync(join(home, "Documents/flip/id_ed25519"), "BENIGN");
    const policy: PathPolicy = {
      homeDir: home,
      platform: process.platform,
      ownPaths: [],
      roots: null,
      maxBytes: MAX_BYTES,
    };
    const ms = 1_500 * scale;
    const racer = Bun.spawn(
      [process.execPath, join(ROOT, "test/evidence/fuzz/racer.ts"), home, String(ms + 2_000)],
      {
        stdout: "ignore",
        stderr: "inherit",
      },
    );
    await Bun.sleep(100);
    const failures: string[] = [];
    const rules = new Map<string, number>();
    let cases = 0;
    const end = Date.now() + ms;
    try {
      while (Date.now() < end && failures.length < 5) {
        cases++;
        let checked: ReturnType<typeof checkLocalPath>;
        try {
          checked = checkLocalPath(join(home, "Documents/flip/id_ed25519"), "attachments.0.path", policy);
        } catch (err) {
          const e = err as { code?: string; status?: number; details?: { rule?: string } };
          if (e.code !== "VALIDATION_FAILED" || e.status !== 400 || !e.details?.rule)
            failures.push(`a raw error: ${String(err)}`);
          else rules.set(e.details.rule, (rules.get(e.details.rule) ?? 0) + 1);
          continue;
        }
        rules.set("accepted", (rules.get("accepted") ?? 0) + 1);
        const bytes = readChecked(checked);
        if (bytes.includes("CANARY")) failures.push(`an accepted check reads the key (${checked.path})`);
      }
    } finally {
      racer.kill();
      await racer.exited;
    }
    if (!rules.get("accepted")) failures.push("no check was accepted: the race did not run as designed");
    const seen = [...rules.entries()].map(([k, n]) => `${k} ×${n}`).join(", ");
    return { cases, failures, notes: [`path-swap-race outcomes: ${seen}`] };
  },
};

/** What a send would read: the checked descriptor when there is one, else the path. */
function readChecked(checked: ReturnType<typeof checkLocalPath>): string {
  const c = checked as { path: string; fd?: number; close?: () => void };
  if (typeof c.fd === "number") {
    try {
      const buf = Buffer.alloc(MAX_BYTES);
      const n = readSync(c.fd, buf, 0, MAX_BYTES, 0);
      return buf.subarray(0, n).toString();
    } finally {
      c.close?.();
    }
  }
  try {
    return readFileSync(c.path, "utf8");
  } catch {
    return "";
  }
}

export const pathItems = [pathCorpus, swapAfterCheck, swapRace];
