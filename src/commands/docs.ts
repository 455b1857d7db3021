/**
 * `gw docs [--redoc] [--out <file>] [--open]`: writes this version's API documentation, the
 * self-contained Swagger UI page (or ReDoc with --redoc) that `gw serve` serves at /docs, to a file —
 * no running service or bearer needed — and prints its path; --open opens it (macOS `open`, else
 * `xdg-open` when there is one). Default file: `<data dir>/docs/gw-<version>[-redoc].html`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { offlineDocsPage } from "../http/docs-offline.ts";
import { VERSION } from "../version.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_OK } from "./exit.ts";
import { configOf } from "./setup.ts";

const USAGE = "usage: gw docs [--redoc] [--out <file>] [--open]";

export async function docs(ctx: CommandContext): Promise<number> {
  const known = new Set(["--redoc", "--open", "--out"]);
  const outAt = ctx.argv.indexOf("--out");
  const out = outAt === -1 ? undefined : ctx.argv[outAt + 1];
  const isOutValue = (i: number) => outAt !== -1 && i === outAt + 1;
  if (ctx.argv.some((a, i) => !known.has(a) && !isOutValue(i)) || (outAt !== -1 && !out))
    throw new CommandError(USAGE, EXIT_CONFIG);
  const redoc = ctx.argv.includes("--redoc");
  const config = configOf(ctx, { required: [] });
  const path = out
    ? resolve(ctx.cwd, out)
    : join(dirname(config.dbPath), "docs", `gw-${VERSION}${redoc ? "-redoc" : ""}.html`);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, await offlineDocsPage(VERSION, redoc ? "redoc" : "swagger"));
  ctx.stdout.write(`${path}\n`);
  if (ctx.argv.includes("--open")) {
    const opener = ctx.platform === "darwin" ? "open" : Bun.which("xdg-open");
    if (!opener) ctx.stderr.write("gw docs: nothing here opens a browser; open the file above yourself\n");
    else Bun.spawn([opener, path], { stdout: "ignore", stderr: "ignore" }).unref();
  }
  return EXIT_OK;
}
