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
import { type AllowlistEntry, parseAllowlist } from "../allowlist/parse.ts";
import { type DeviceService, FORGEABLE_SERVICES, parseServices } from "../allowlist/services.ts";
import { SOURCES, type Source } from "../core/envelope.ts";
import { optionOf } from "./args.ts";
import { senderHandles } from "./contact-sender.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { livePid, pidFileOf } from "./pid-file.ts";
import { configOf } from "./setup.ts";

const USAGE =
  "usage: gw allow <device_messenger|community_chat> <sender id, or a Contacts name> --person <person id> [--name <display name>] [--services iMessage,SMS,RCS]";

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

  const { handles, card } = senderHandles(config, source as Source, id);
  const note = `added by gw allow on ${new Date().toISOString()}${card ? ` (Contacts card ${card.name})` : ""}`;
  let text = existsSync(path) ? readFileSync(path, "utf8") : "";
  const allowed: AllowlistEntry[] = [];
  for (const handle of handles) {
    const listed = parseAllowlist(text);
    const already = listed.ok ? listed.allowlist.lookup(source as Source, handle) : null;
    // A card's handle already listed for this person is kept as it is (the others are added).
    if (card && already?.person_id === person.trim() && !services) continue;
    // --services on a sender already listed changes that entry's services (e.g. to trust their SMS).
    const result =
      services && already
        ? setServices(text, { source: source as Source, id: handle, personId: person, services })
        : appendEntry(
            text,
            {
              source: source as Source,
              id: handle,
              personId: person,
              displayName: name ?? card?.name ?? null,
              ...(services ? { services } : {}),
            },
            note,
          );
    if (!result.ok) throw new CommandError(`gw allow: ${result.problem} (${path})`, EXIT_FAILURE);
    text = result.text;
    allowed.push(result.entry);
  }
  if (allowed.length === 0)
    throw new CommandError(
      `gw allow: every handle of ${card?.name ?? id} is already allowed as person "${person}"`,
      EXIT_FAILURE,
    );

  const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0o600;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.gw-allow-${process.pid}`;
  writeFileSync(temp, text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
  for (const e of allowed)
    ctx.stdout.write(
      `Allowed ${e.source} ${e.id} as person "${e.person_id}"${e.display_name ? ` (${e.display_name})` : ""} in ${path}.\n`,
    );
  const e = allowed[0] as AllowlistEntry;
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
