/**
 * A full disk for one process, without root or a mount: its file-size limit (RLIMIT_FSIZE), lowered and
 * raised again from outside with prlimit(2) (through libc with bun:ffi, else util-linux `prlimit`).
 * Past the limit every write to a regular file fails with EFBIG (Bun ignores SIGXFSZ), the way writes
 * fail with ENOSPC on a full disk; reads, pipes and shared memory are untouched. Linux only: elsewhere
 * `fileSizeLimiter()` says why it cannot run.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";

const RLIMIT_FSIZE = 1;

export interface FileSizeLimiter {
  how: string;
  /** Lowers the soft limit to `bytes` (0: no byte may be written); the hard limit stays. */
  limit(pid: number, bytes: number): void;
  /** Puts back the soft limit found before `limit`. */
  restore(pid: number): void;
}

export function fileSizeLimiter(): FileSizeLimiter | { unavailable: string } {
  if (process.platform !== "linux")
    return { unavailable: `prlimit(2) is Linux-only (this is ${process.platform})` };
  const viaLibc = libcLimiter();
  if (viaLibc) return viaLibc;
  if (Bun.which("prlimit")) return commandLimiter();
  return { unavailable: "neither libc's prlimit (bun:ffi) nor the prlimit command is available" };
}

const openLibc = () =>
  dlopen("libc.so.6", {
    prlimit: { args: [FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  });

function libcLimiter(): FileSizeLimiter | null {
  let lib: ReturnType<typeof openLibc>;
  try {
    lib = openLibc();
  } catch {
    return null;
  }
  const before = new Map<number, bigint>();
  const current = (pid: number) => {
    const old = new BigUint64Array(2);
    if (lib.symbols.prlimit(pid, RLIMIT_FSIZE, null, ptr(old)) !== 0)
      throw new Error(`prlimit(${pid}) failed`);
    return old;
  };
  const set = (pid: number, soft: bigint) => {
    const hard = current(pid)[1] as bigint;
    const next = new BigUint64Array([soft, hard]);
    if (lib.symbols.prlimit(pid, RLIMIT_FSIZE, ptr(next), null) !== 0)
      throw new Error(`prlimit(${pid}) failed`);
  };
  return {
    how: "prlimit(2) through libc (bun:ffi)",
    limit(pid, bytes) {
      before.set(pid, current(pid)[0] as bigint);
      set(pid, BigInt(bytes));
    },
    restore(pid) {
      set(pid, before.get(pid) ?? 0xffff_ffff_ffff_ffffn);
    },
  };
}

function commandLimiter(): FileSizeLimiter {
  const run = (args: string[]) => {
    const p = Bun.spawnSync(["prlimit", ...args], { stdout: "pipe", stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`prlimit ${args.join(" ")}: ${p.stderr.toString()}`);
    return p.stdout.toString();
  };
  const before = new Map<number, string>();
  return {
    how: "the prlimit command (util-linux)",
    limit(pid, bytes) {
      before.set(
        pid,
        run(["--pid", String(pid), "--fsize", "--output=SOFT", "--noheadings", "--raw"]).trim(),
      );
      run(["--pid", String(pid), `--fsize=${bytes}:`]);
    },
    restore(pid) {
      run(["--pid", String(pid), `--fsize=${before.get(pid) ?? "unlimited"}:`]);
    },
  };
}
