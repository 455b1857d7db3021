/**
 * The hostile attachment paths of the attachment-paths item (paths.ts; reliability.md §5, B8): a home
 * planted with canary files in every denied place (~/.ssh, ~/.gnupg, ~/.aws, ~/.config/gw,
 * ~/Library/Keychains, ~/Library/Messages with chat.db, gw's data dir with its database, attachments, logs
 * and allowlist) and the cases tried against it, each with the rules that may refuse it: symlinks into the
 * denied places, `..` traversal, relative paths, NUL bytes, %-encoding, case and NFC/NFD variants, FIFOs,
 * devices, a socket, directories, files over GW_ATTACHMENT_MAX_BYTES, names with newlines, /proc and
 * /dev/fd aliases, adapter-url lookalikes; and, with GW_SEND_PATH_ROOTS, sibling-prefix roots and escapes.
 */
import { mkdirSync, readdirSync, readlinkSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { tempDir } from "../../helpers/temp.ts";

/** GW_ATTACHMENT_MAX_BYTES of the items' services. */
export const MAX_BYTES = 1000;
/** gw's data dir (composed form); its decomposed spelling is another name on Linux. */
export const NFC_DATA = "Donn\u00e9es";
const NFD_DATA = "Donne\u0301es";

export interface Case {
  what: string;
  path: string;
  /** Acceptable rules (400 VALIDATION_FAILED); or a 404 code for url cases. */
  rules: string[];
  url?: boolean;
}

/**
 * A new home directory (a temp dir named `prefix`…) planted with a canary file in every denied place, the
 * Documents the corpus points into (an ordinary file, a name with a newline, a file over the cap, a 10 GiB
 * sparse file, symlinks into the denied places, a FIFO, a listening socket) and ~/.ssh-evil; returns the
 * home, its canaries (file -> secret content), `D` (a path under Documents) and the socket's stop.
 */
export function plantHome(prefix: string) {
  const home = tempDir(prefix);
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
  return { home, canaries, D, stopSocket: () => sock.stop(true) };
}

export function corpus(home: string, D: (rel: string) => string): Case[] {
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
export function rootsCorpus(home: string): Case[] {
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
