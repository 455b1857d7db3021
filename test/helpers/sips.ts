/** Writes the `sips` stand-in wrapper (test/fakes/fake-sips.ts run by this bun) used as GW_SIPS_PATH. */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./process.ts";

export function sipsStandIn(dir: string): string {
  const path = join(dir, "sips");
  writeFileSync(
    path,
    `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, "test/fakes/fake-sips.ts")}' "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}
