/**
 * `gw demo`: the real service on a temporary data dir with simulated sources, runnable on any OS.
 * A demo chat.db with Messages' schema receives a new incoming message every few seconds (one
 * allowlisted friend, one stranger), and the built-in Messages stand-in (this same binary, behind a
 * tiny wrapper used as GW_OSASCRIPT_PATH) writes sent messages back into it as Messages does. Prints
 * the generated token and ready-to-paste curl lines; Ctrl-C stops everything and removes the folder.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildConnectors } from "../connectors/registry.ts";
import { systemClock } from "../core/ports.ts";
import { bunSpawner } from "../core/spawn.ts";
import { openChatDbWriter } from "../demo/chatdb-writer.ts";
import { createService } from "../service.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { selfCommand } from "./self.ts";
import { configOf, hostOf, loggerOf } from "./setup.ts";

export const FRIEND = "+15555550100";
export const STRANGER = "+15555550199";
const LINES: [string, string][] = [
  [FRIEND, "Hey! Are we still on for lunch tomorrow?"],
  [STRANGER, "Congratulations, you won a prize! Reply with your bank details."],
  [FRIEND, "I can bring the slides for Thursday 📎"],
  [FRIEND, "Also: the café on 3rd moved to noon."],
  [STRANGER, "Hi, this is your delivery driver, where do I leave the parcel?"],
  [FRIEND, "Ping me when you're free 🙂"],
];

function parseInterval(argv: readonly string[]): number {
  const i = argv.indexOf("--interval");
  if (i === -1) return 4000;
  const seconds = Number(argv[i + 1]);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new CommandError("gw demo: --interval takes a number of seconds, e.g. --interval 2", EXIT_CONFIG);
  }
  return Math.round(seconds * 1000);
}

export async function demo(ctx: CommandContext): Promise<number> {
  const intervalMs = parseInterval(ctx.argv);
  const dir = mkdtempSync(join(tmpdir(), "gw-demo-"));
  const chatDbPath = join(dir, "Library/Messages/chat.db");
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");
  const port = ctx.env.GW_BIND_PORT ?? "8080";

  mkdirSync(dirname(chatDbPath), { recursive: true });
  const writer = openChatDbWriter(chatDbPath);
  writer.chat({ guid: `any;-;${FRIEND}`, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: `any;-;${STRANGER}`, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  writeFileSync(
    join(dir, "allowlist.toml"),
    `[[entry]]\nsource = "device_messenger"\nid = "${FRIEND}"\nperson_id = "demo-friend"\ndisplay_name = "Demo Friend"\n`,
  );
  const standIn = join(dir, "osascript");
  writeFileSync(
    standIn,
    `#!/bin/sh\nexec ${selfCommand()
      .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
      .join(" ")} __messages-standin "$@"\n`,
  );
  chmodSync(standIn, 0o700);

  const env: Record<string, string | undefined> = {
    PATH: ctx.env.PATH,
    HOME: dir,
    GW_BEARER_TOKEN: token,
    GW_BIND_HOST: "127.0.0.1",
    GW_BIND_PORT: port,
    GW_DB_PATH: join(dir, "data/gw.db"),
    GW_ATTACHMENT_DIR: join(dir, "data/attachments"),
    GW_LOG_DIR: join(dir, "logs"),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
    GW_CHAT_DB_PATH: chatDbPath,
    GW_OSASCRIPT_PATH: standIn,
    GW_STANDIN_CHAT_DB: chatDbPath,
    GW_LOG_LEVEL: ctx.env.GW_LOG_LEVEL ?? "warn",
  };
  const host = hostOf(ctx, dir);
  const config = configOf(ctx, { env, host });
  const log = loggerOf(config, ctx);
  const connectors = buildConnectors({ config, env, host, clock: systemClock, log, spawner: bunSpawner });
  const service = createService({ config, clock: systemClock, log, host, connectors });
  service.prepare();
  try {
    service.app.listen({ hostname: config.bindHost, port: config.bindPort, reusePort: false });
    await service.start();
  } catch (err) {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
    throw new CommandError(
      `gw demo: cannot listen on port ${port} (${(err as Error).message}). Set GW_BIND_PORT to a free port.`,
      EXIT_FAILURE,
    );
  }
  const base = `http://127.0.0.1:${service.app.server?.port ?? port}`;
  ctx.stdout.write(banner(base, token, chatDbPath, intervalMs));

  let n = 0;
  const generator = setInterval(() => {
    const [from, text] = LINES[n % LINES.length] as [string, string];
    try {
      writer.message({ chatGuid: `any;-;${from}`, from, text });
      n += 1;
    } catch (err) {
      // Busy past its timeout (e.g. the stand-in writing a reply): this line goes out on the next tick.
      log.warn({ err: String(err) }, "demo: could not write the next simulated message; trying again");
    }
  }, intervalMs);

  return await new Promise<number>((resolve) => {
    const stop = async () => {
      clearInterval(generator);
      service.endLongPolls();
      await service.app.stop();
      await service.close();
      writer.close();
      rmSync(dir, { recursive: true, force: true });
      ctx.stdout.write("\ngw demo stopped; its temporary folder is removed.\n");
      resolve(EXIT_OK);
    };
    process.once("SIGINT", () => void stop());
    process.once("SIGTERM", () => void stop());
  });
}

function banner(base: string, token: string, chatDb: string, intervalMs: number): string {
  const h = `-H "Authorization: Bearer ${token}"`;
  return `
gw demo is running at ${base}
A simulated iMessage account receives a message every ${intervalMs / 1000} s: "Demo Friend" (${FRIEND}) is on
the allowlist; the stranger (${STRANGER}) is quarantined. Replies you send land back in the demo chat.db.

  export GW_BEARER_TOKEN=${token}

Read what your agent would see:
  curl -s ${h} -H "X-Agent-ID: me" ${base}/messages/unread

See who is quarantined:
  curl -s ${h} ${base}/messages/quarantine

Reply to the friend:
  curl -s ${h} -H "Content-Type: application/json" -H "Idempotency-Key: $(uuidgen 2>/dev/null || date +%s%N)" \\
    -d '{"channel_id": "${FRIEND}", "text": "Sounds good!"}' ${base}/messages/send

Mark everything read (ids from the unread answer):
  curl -s ${h} -H "X-Agent-ID: me" -H "Content-Type: application/json" \\
    -d '{"message_ids": ["msg_..."]}' ${base}/messages/mark_read

Health: curl -s ${base}/healthz     API docs: ${base}/docs (with the bearer)
Demo chat.db: ${chatDb}
Press Ctrl-C to stop.
`;
}
