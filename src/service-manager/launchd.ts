/**
 * launchd actions (runner) through `launchctl` in the user's gui/<uid> domain: whether the job is
 * loaded (print: exit 0 = loaded, 113 "Could not find service" = not), load (bootout first when
 * loaded, waiting until launchd has let go, then bootstrap the plist) and unload (bootout only when
 * loaded). A failure is a ServiceError with launchctl's own words and what to try.
 */

import { ServiceError } from "./errors.ts";
import { type LaunchctlInfo, parseLaunchctlPrint } from "./launchctl-print.ts";
import type { ServiceTarget } from "./target.ts";
import { type RunTool, toolFailure } from "./tools.ts";

/** launchctl's exit status for "Could not find service … in domain". */
export const LAUNCHCTL_NOT_FOUND = 113;
/** What bootout answers for a job that went away meanwhile (ESRCH, "No such process"). */
const LAUNCHCTL_NO_SUCH_PROCESS = 3;
export const BOOTOUT_WAIT_MS = 10_000;
const BOOTOUT_POLL_MS = 100;

export type LaunchdState = { loaded: false } | { loaded: true; info: LaunchctlInfo };

export async function launchdState(target: ServiceTarget, run: RunTool): Promise<LaunchdState> {
  const argv = ["launchctl", "print", target.serviceRef];
  const r = await run(argv);
  if (r.exitCode === 0) return { loaded: true, info: parseLaunchctlPrint(r.stdout) };
  if (r.exitCode === LAUNCHCTL_NOT_FOUND || /could not find service/i.test(`${r.stderr}${r.stdout}`))
    return { loaded: false };
  throw toolFailure(argv, r, "Run it from a Terminal in your logged-in desktop session.");
}

/** Loads the plist, replacing a loaded copy. Returns whether an older copy was booted out. */
export async function launchdLoad(target: ServiceTarget, run: RunTool): Promise<{ replaced: boolean }> {
  const before = await launchdState(target, run);
  if (before.loaded) await bootout(target, run);
  const argv = ["launchctl", "bootstrap", target.domain, target.definitionPath];
  const r = await run(argv);
  if (r.exitCode !== 0)
    throw toolFailure(
      argv,
      r,
      `Check the file with \`plutil -lint ${target.definitionPath}\`; run this from a Terminal in your logged-in desktop session (the ${target.domain} domain exists only there); if launchctl says the service is disabled, run \`launchctl enable ${target.serviceRef}\` and install again.`,
    );
  return { replaced: before.loaded };
}

/** Unloads the job when it is loaded. Returns whether it was. */
export async function launchdUnload(target: ServiceTarget, run: RunTool): Promise<boolean> {
  const state = await launchdState(target, run);
  if (state.loaded) await bootout(target, run);
  return state.loaded;
}

async function bootout(target: ServiceTarget, run: RunTool): Promise<void> {
  const argv = ["launchctl", "bootout", target.serviceRef];
  const r = await run(argv);
  if (r.exitCode !== 0 && r.exitCode !== LAUNCHCTL_NOT_FOUND && r.exitCode !== LAUNCHCTL_NO_SUCH_PROCESS)
    throw toolFailure(argv, r, `The plist ${target.definitionPath} was left in place; try again.`);
  for (let waited = 0; (await launchdState(target, run)).loaded; waited += BOOTOUT_POLL_MS) {
    if (waited >= BOOTOUT_WAIT_MS)
      throw new ServiceError(
        `gw service: ${target.serviceRef} is still loaded ${BOOTOUT_WAIT_MS / 1000} s after \`launchctl bootout\`; try again.`,
      );
    await Bun.sleep(BOOTOUT_POLL_MS);
  }
}
