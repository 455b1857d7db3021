/**
 * `gw webhooks list [--status pending|delivered|dead] [--limit N]` and
 * `gw webhooks redeliver <delivery id> | --all-dead`: the operator's view of the outbox and the manual
 * re-drive every webhook provider offers. A re-driven row is `pending` again with a fresh attempt count
 * and the same delivery id; a running `gw serve` picks it up within a second. A delivery of a message that
 * was deleted since is refused (its content is purged: extensions.md §4). Works on the state
 * database directly (same machine), so it needs no token.
 */
import { formatTimestamp } from "../core/time.ts";
import type { DeliveryStatus } from "../store/deliveries.ts";
import { openStore } from "../store/store.ts";
import { optionOf } from "./args.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_OK } from "./exit.ts";
import { configOf, readStore } from "./setup.ts";

const STATUSES = ["pending", "delivered", "dead"] as const;
const USAGE =
  "usage: gw webhooks list [--status pending|delivered|dead] [--limit N] | gw webhooks redeliver <delivery id> | --all-dead";

/** The outbox as it stands, read-only (a database that does not exist yet is not created). */
function list(ctx: CommandContext, rest: readonly string[], dbPath: string): number {
  const status = optionOf(rest, "--status") ?? null;
  if (status !== null && !(STATUSES as readonly string[]).includes(status))
    throw new CommandError(USAGE, EXIT_CONFIG);
  const limit = Number(optionOf(rest, "--limit") ?? "50");
  if (!Number.isInteger(limit) || limit < 1) throw new CommandError(USAGE, EXIT_CONFIG);
  const store = readStore(dbPath);
  if (!store) {
    ctx.stdout.write("0 pending, 0 dead (no state database yet)\n");
    return EXIT_OK;
  }
  try {
    const rows = store.deliveries.list(status as DeliveryStatus | null, limit);
    const c = store.deliveries.counts();
    ctx.stdout.write(`${c.pending} pending, ${c.dead} dead\n`);
    for (const r of rows) {
      const next = r.next_attempt_at === null ? "-" : formatTimestamp(r.next_attempt_at);
      ctx.stdout.write(
        `${r.id}  ${r.status.padEnd(9)} attempts=${r.attempt_count} last_code=${r.last_code ?? "-"} next=${next} message=${r.message_id}${r.last_error ? ` error="${r.last_error}"` : ""}\n`,
      );
    }
    return EXIT_OK;
  } finally {
    store.close();
  }
}

export async function webhooks(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.argv;
  if (sub !== "list" && sub !== "redeliver") throw new CommandError(USAGE, EXIT_CONFIG);
  const { dbPath } = configOf(ctx, { required: [] });
  if (sub === "list") return list(ctx, rest, dbPath);
  const store = openStore(dbPath);
  try {
    const now = Date.now();
    if (rest[0] === "--all-dead") {
      ctx.stdout.write(`${store.deliveries.requeueAllDead(now)} dead deliveries queued again\n`);
      return EXIT_OK;
    }
    const id = rest[0];
    if (!id) throw new CommandError(USAGE, EXIT_CONFIG);
    if (store.deliveries.isPurged(id))
      throw new CommandError(
        `gw webhooks: delivery ${id} is of a message that was unsent or deleted; its content is purged and is never sent again`,
      );
    if (!store.deliveries.requeue(id, now)) throw new CommandError(`gw webhooks: no delivery ${id}`);
    ctx.stdout.write(`delivery ${id} queued again\n`);
    return EXIT_OK;
  } finally {
    store.close();
  }
}
