/**
 * HEIC/HEIF to JPEG with macOS `sips` (runner): `<GW_SIPS_PATH> -s format jpeg <in> --out <out>`, values
 * only in argv, no shell, the minimal child environment the composition root built, a deadline. The
 * outcome is ok only when the output exists and its bytes are a JPEG; otherwise a one-line reason.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import type { Spawner } from "../core/ports.ts";
import { SNIFF_BYTES, sniffType } from "./file-type.ts";

export const SIPS_TIMEOUT_MS = 30_000;
export const SIPS_KILL_GRACE_MS = 2_000;

/** What sips gets beyond the child allowlist: the tests' stand-in settings (GW_STANDIN_*). */
export const SIPS_ENV = ["__CF_USER_TEXT_ENCODING", "GW_STANDIN_*"];

export type ConvertOutcome = { ok: true } | { ok: false; reason: string };
export type HeicConverter = (input: string, output: string) => Promise<ConvertOutcome>;

/** The argv of one conversion. Pure. */
export const sipsArgv = (sipsPath: string, input: string, output: string): string[] => [
  sipsPath,
  "-s",
  "format",
  "jpeg",
  input,
  "--out",
  output,
];

function isJpeg(path: string): boolean {
  if (!existsSync(path)) return false;
  const fd = openSync(path, "r");
  try {
    const head = new Uint8Array(SNIFF_BYTES);
    return sniffType(head.subarray(0, readSync(fd, head, 0, SNIFF_BYTES, 0))) === "image/jpeg";
  } finally {
    closeSync(fd);
  }
}

export function sipsConverter(deps: {
  sipsPath: string;
  env: Record<string, string>;
  spawner: Spawner;
}): HeicConverter {
  return async (input, output) => {
    if (!existsSync(deps.sipsPath))
      return {
        ok: false,
        reason: `the converter ${deps.sipsPath} (GW_SIPS_PATH) does not exist on this host`,
      };
    let r: Awaited<ReturnType<Spawner["run"]>>;
    try {
      r = await deps.spawner.run(sipsArgv(deps.sipsPath, input, output), {
        stdin: "",
        timeoutMs: SIPS_TIMEOUT_MS,
        killGraceMs: SIPS_KILL_GRACE_MS,
        env: deps.env,
      });
    } catch (err) {
      return {
        ok: false,
        reason: `${deps.sipsPath} (GW_SIPS_PATH) could not be run: ${(err as Error).message}`,
      };
    }
    if (r.timedOut)
      return { ok: false, reason: `${deps.sipsPath} did not finish within ${SIPS_TIMEOUT_MS} ms` };
    if (r.exitCode !== 0) {
      const why = r.stderr.trim().split("\n").at(-1)?.slice(0, 300) ?? "";
      return { ok: false, reason: `${deps.sipsPath} failed (exit ${r.exitCode})${why ? `: ${why}` : ""}` };
    }
    if (!isJpeg(output)) return { ok: false, reason: `${deps.sipsPath} did not write a JPEG` };
    return { ok: true };
  };
}
