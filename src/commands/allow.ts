/**
 * `gw allow <source> <sender id> --person <id> [--name <display name>] [--services iMessage,SMS,RCS]`: lets
 * one sender through (`--services`: which Messages services its entry trusts; iMessage only by default,
 * GW_DEVICE_TRUSTED_SERVICES). Appends a
 * valid entry to the allowlist file (allowlist/append.ts: the rest of the file kept as it is), replaced
 * atomically with the file's mode, then sends SIGHUP to the running `gw serve` named by its pid file.
 * Messages already stored keep their status (the allowlist is not applied retroactively). Exit 2 for bad
 * arguments, 1 when the file cannot be changed.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { appendEntry, setServices } from "../allowlist/append.ts";
import { parseAllowlist } from "../allowlist/parse.ts";
import { type DeviceService, FORGEABLE_SERVICES, parseServices } from "../allowlist/services.ts";
import { SOURCES, type Source } from "../core/envelope.ts";
import { optionOf } from "./args.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { livePid, pidFileOf } from "./pid-file.ts";
import { configOf } from "./setup.ts";

const USAGE =
  "usage: gw allow <device_messenger|community_chat> <sender id> --person <person id> [--name <display name>] [--services iMessage,SMS,RCS]";

/** `--services`' value: iMessage/SMS/RCS for a device_messenger sender, or a usage error saying why. */
function servicesOption(source: string, value: string | undefined): DeviceService[] | undefined {
  if (value === undefined) return undefined;
  if (source !== "device_messenger")
    throw new CommandError("gw allow: --services applies only to device_messenger senders", EXIT_CONFIG);
  const parsed = parseServices(value.split(",").filter((w) => w.trim() !== ""));
  if (!parsed.ok) throw new CommandError(`gw allow: --services ${parsed.problem}\n${USAGE}`, EXIT_CONFIG);
  return parsed.services;
}

export async function allow(ctx: CommandContext): Promise<number> {
  const [source, id] = ctx.argv;
  const person = optionOf(ctx.argv, "--person");
  const name = optionOf(ctx.argv, "--name") ?? null;
  if (!source || !(SOURCES as readonly string[]).includes(source) || !id || id.startsWith("--") || !person)
    throw new CommandError(USAGE, EXIT_CONFIG);
  const services = servicesOption(source, optionOf(ctx.argv, "--services"));
  const config = configOf(ctx, { required: [] });
  const path = config.allowlistPath;

  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  const listed = parseAllowlist(text);
  // --services on a sender already listed changes that entry's services (e.g. to trust their SMS).
  const result =
    services && listed.ok && listed.allowlist.lookup(source as Source, id)
      ? setServices(text, { source: source as Source, id, personId: person, services })
      : appendEntry(
          text,
          {
            source: source as Source,
            id,
            personId: person,
            displayName: name,
            ...(services ? { services } : {}),
          },
          `added by gw allow on ${new Date().toISOString()}`,
        );
  if (!result.ok) throw new CommandError(`gw allow: ${result.problem} (${path})`, EXIT_FAILURE);

  const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0o600;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.gw-allow-${process.pid}`;
  writeFileSync(temp, result.text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
  const e = result.entry;
  ctx.stdout.write(
    `Allowed ${e.source} ${e.id} as person "${e.person_id}"${e.display_name ? ` (${e.display_name})` : ""} in ${path}.\n`,
  );
  const trusted = services ?? (e.source === "device_messenger" ? config.deviceTrustedServices : null);
  if (trusted) ctx.stdout.write(`Trusted over ${trusted.join(", ")}.\n`);
  if (trusted?.some((s) => FORGEABLE_SERVICES.includes(s)))
    ctx.stdout.write(
      "Warning: SMS and RCS sender ids can be forged: anyone who knows this number can write to your agents as this person.\n",
    );

  const pid = livePid(pidFileOf(config.dbPath));
  if (pid !== null) {
    process.kill(pid, "SIGHUP");
    ctx.stdout.write(
      `gw serve (pid ${pid}) reloads the allowlist now: new messages from this sender reach agents.\n`,
    );
  } else {
    ctx.stdout.write("gw serve is not running here; it reads the allowlist when it starts.\n");
  }
  ctx.stdout.write("Messages already stored keep their status (they stay in the quarantine).\n");
  return EXIT_OK;
}
