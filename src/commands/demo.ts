/**
 * `gw demo`: the real service on a temporary data dir with both platforms simulated, on any OS, offline:
 * iMessage through a demo chat.db and the built-in Messages stand-in, Discord through the fake Discord
 * (src/demo/fake-discord, loaded only here), which gw's real connector logs in to as `gw serve` would.
 * Webhooks (messages and events) go to a built-in receiver that verifies them as `gw receiver` does, or to
 * `--webhook-url`. Like `gw serve` it writes its pid file and reloads the allowlist on SIGHUP, so the
 * banner's `gw quarantine` / `gw allow` lines work on it. Ctrl-C / SIGTERM stops the service, then the
 * receiver and the fake Discord, and removes the folder.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildConnectors } from "../connectors/registry.ts";
import { systemClock } from "../core/ports.ts";
import { bunSpawner } from "../core/spawn.ts";
import { addressBookPath, createAddressBook } from "../demo/addressbook-writer.ts";
import { banner } from "../demo/banner.ts";
import { openChatDbWriter } from "../demo/chatdb-writer.ts";
import type { DiscordScene } from "../demo/discord-scene.ts";
import { watchOwnRows } from "../demo/imessage-replies.ts";
import { startReceiverSink } from "../demo/receiver-sink.ts";
import { demoAllowlist, FRIEND, FRIEND_NAME, preview, STRANGER, STRANGER_NAME } from "../demo/script.ts";
import { runScript } from "../demo/script-runner.ts";
import { createService } from "../service.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_FAILURE } from "./exit.ts";
import { superviseProcess } from "./lifecycle.ts";
import { makeReachable } from "./reachable.ts";
import { selfCommand } from "./self.ts";
import { configOf, hostOf, loggerOf } from "./setup.ts";

/** How long the banner waits for the Discord connector to be ready (it is local: well under a second). */
const DISCORD_READY_TIMEOUT_MS = 15_000;
/** The demo's stop (the service, the sink, the fake Discord) ends within this. */
const DEMO_STOP_DEADLINE_MS = 10_000;

/** `--webhook-url <url>`: webhooks go there (e.g. a real `gw receiver`) instead of the built-in receiver. */
function parseWebhookUrl(argv: readonly string[]): string | null {
  const i = argv.indexOf("--webhook-url");
  if (i === -1) return null;
  const url = argv[i + 1] ?? "";
  if (!/^https?:\/\/[^\s]+$/.test(url))
    throw new CommandError(
      "gw demo: --webhook-url takes an http(s) URL, e.g. --webhook-url http://127.0.0.1:8090/webhook",
      EXIT_CONFIG,
    );
  return url;
}

function parseInterval(argv: readonly string[]): number {
  const i = argv.indexOf("--interval");
  if (i === -1) return 4000;
  const seconds = Number(argv[i + 1]);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new CommandError("gw demo: --interval takes a number of seconds, e.g. --interval 2", EXIT_CONFIG);
  }
  return Math.round(seconds * 1000);
}

const randomHex = (bytes: number) =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
const shellQuote = (a: string) => `'${a.replaceAll("'", "'\\''")}'`;

/**
 * The Messages stand-in as an osascript (GW_OSASCRIPT_PATH): this binary's hidden command, told where the
 * demo chat.db is, into which it writes the sent messages back.
 */
function writeStandIn(dir: string, chatDbPath: string): string {
  const path = join(dir, "osascript");
  writeFileSync(
    path,
    `#!/bin/sh\nGW_STANDIN_CHAT_DB=${shellQuote(chatDbPath)}\nexport GW_STANDIN_CHAT_DB\n` +
      `exec ${selfCommand().map(shellQuote).join(" ")} __messages-standin "$@"\n`,
  );
  chmodSync(path, 0o700);
  return path;
}

/** The demo's Contacts folder: the friend's card and the stranger's (a number typed the national way). */
function writeDemoContacts(contactsDir: string): void {
  const book = createAddressBook(addressBookPath(contactsDir, "DEMO-ICLOUD"));
  const [first, last] = FRIEND_NAME.split(" ");
  book.addCard({
    first: first ?? FRIEND_NAME,
    last: last ?? null,
    phones: [FRIEND],
    emails: ["friend@example.com"],
  });
  const [sFirst, sLast] = STRANGER_NAME.split(" ");
  book.addCard({ first: sFirst ?? STRANGER_NAME, last: sLast ?? null, phones: ["(555) 555-0199"] });
  book.close();
}

/** The demo's environment: everything under `dir`, both platforms simulated, webhooks to `webhookUrl`. */
function demoEnv(
  ctx: CommandContext,
  dir: string,
  s: {
    chatDbPath: string;
    token: string;
    discord: DiscordScene;
    webhookUrl: string;
    webhookSecret: string;
  },
): Record<string, string | undefined> {
  return {
    PATH: ctx.env.PATH,
    HOME: dir,
    GW_BEARER_TOKEN: s.token,
    GW_BIND_HOST: "127.0.0.1",
    GW_BIND_PORT: ctx.env.GW_BIND_PORT ?? "8080",
    GW_DB_PATH: join(dir, "data/gw.db"),
    GW_ATTACHMENT_DIR: join(dir, "data/attachments"),
    GW_LOG_DIR: join(dir, "logs"),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
    GW_CHAT_DB_PATH: s.chatDbPath,
    GW_CONTACTS_DIR: join(dir, "AddressBook"),
    GW_DEFAULT_REGION: "US",
    GW_OSASCRIPT_PATH: writeStandIn(dir, s.chatDbPath),
    GW_COMMUNITY_BOT_TOKEN: s.discord.token,
    GW_COMMUNITY_API_URL: s.discord.apiUrl,
    GW_WEBHOOK_URL: s.webhookUrl,
    GW_WEBHOOK_SECRET: s.webhookSecret,
    // Edits, unsends and reactions are pushed too, so the webhook lines show them.
    GW_WEBHOOK_EVENTS: "all",
    GW_LOG_LEVEL: ctx.env.GW_LOG_LEVEL ?? "warn",
  };
}

/** The real service on the demo's environment, listening; undone by `undo`. */
async function startDemoService(
  ctx: CommandContext,
  env: Record<string, string | undefined>,
  dir: string,
  undo: (() => unknown)[],
) {
  const host = hostOf(ctx, dir);
  const config = configOf(ctx, { env, host });
  const log = await loggerOf(config, ctx);
  const connectors = buildConnectors({ config, env, host, clock: systemClock, log, spawner: bunSpawner });
  const service = createService({ config, clock: systemClock, log, host, connectors });
  undo.push(() => service.close());
  service.prepare();
  // The demo's chat.db is new and holds no messages: its reader starts at the beginning. (A first
  // start on a real Mac starts at the end of chat.db, and says so with a warning.)
  service.store.cursors.set("device_messenger", "0", systemClock.now());
  try {
    service.app.listen({ hostname: config.bindHost, port: config.bindPort, reusePort: false });
  } catch (err) {
    throw new CommandError(
      `gw demo: cannot listen on port ${config.bindPort} (${(err as Error).message}). Set GW_BIND_PORT to a free port.`,
      EXIT_FAILURE,
    );
  }
  undo.push(() => service.app.stop());
  await service.start();
  await discordReady((req) => service.app.handle(req));
  return { service, log };
}

export async function demo(ctx: CommandContext): Promise<number> {
  const intervalMs = parseInterval(ctx.argv);
  const print = (line: string) => void ctx.stdout.write(`${line}\n`);
  const dir = mkdtempSync(join(tmpdir(), "gw-demo-"));
  const undo: (() => unknown)[] = [() => rmSync(dir, { recursive: true, force: true })];
  /** Undoes what was set up so far, newest first (each step once). */
  const unwind = async () => {
    for (let step = undo.pop(); step; step = undo.pop()) await step();
  };

  try {
    const { startDiscordScene } = await import("../demo/discord-scene.ts");
    const discord = await startDiscordScene({
      onPost: (p) => print(`discord   posted in ${p.place} as @${p.author}: ${preview(p.content)}`),
    });
    undo.push(() => discord.stop());
    const webhookSecret = randomHex(32);
    const ownWebhookUrl = parseWebhookUrl(ctx.argv);
    let webhookUrl = ownWebhookUrl;
    if (webhookUrl === null) {
      const sink = startReceiverSink({ secret: webhookSecret, print, label: discord.label });
      undo.push(() => sink.stop());
      webhookUrl = sink.url;
    }

    const chatDbPath = join(dir, "Library/Messages/chat.db");
    mkdirSync(dirname(chatDbPath), { recursive: true });
    const writer = openChatDbWriter(chatDbPath);
    undo.push(() => writer.close());
    for (const who of [FRIEND, STRANGER])
      writer.chat({ guid: `any;-;${who}`, style: 45, chatIdentifier: who, participants: [who] });
    writeFileSync(join(dir, "allowlist.toml"), demoAllowlist(discord.friend.id));
    writeDemoContacts(join(dir, "AddressBook"));

    const token = randomHex(24);
    const env = demoEnv(ctx, dir, { chatDbPath, token, discord, webhookUrl, webhookSecret });
    const { service, log } = await startDemoService(ctx, env, dir, undo);
    const base = `http://127.0.0.1:${service.app.server?.port ?? env.GW_BIND_PORT}`;
    // Reachable as gw serve is: gw quarantine / gw allow (with the banner's paths) signal this process.
    const unreachable = makeReachable({
      dbPath: env.GW_DB_PATH as string,
      reload: service.allowlist.reload,
      log,
      events: process,
    });
    undo.push(unreachable);
    // The supervisor first: a Ctrl-C once the banner shows is always the ordered stop. The service first
    // (long polls answered, server closed, connectors and in-flight webhooks finished), then the webhook
    // receiver and the fake Discord it was talking to, then the folder.
    let stopScript = () => {};
    let replies = { stop: () => {} };
    const life = superviseProcess({
      events: process,
      log,
      stopDeadlineMs: DEMO_STOP_DEADLINE_MS,
      stop: async () => {
        stopScript();
        replies.stop();
        service.endLongPolls();
        await unwind();
      },
      finish: () => {
        rmSync(dir, { recursive: true, force: true });
        ctx.stdout.write("\ngw demo stopped; its temporary folder is removed.\n");
      },
    });
    ctx.stdout.write(
      banner({
        base,
        token,
        chatDb: chatDbPath,
        dbPath: env.GW_DB_PATH as string,
        allowlistPath: env.GW_ALLOWLIST_PATH as string,
        contactsDir: env.GW_CONTACTS_DIR as string,
        gw: selfCommand(),
        intervalMs,
        discordChannelId: discord.channelId,
        webhook: { url: webhookUrl, secret: webhookSecret, own: ownWebhookUrl !== null },
      }),
    );
    replies = watchOwnRows(writer.db, (r) =>
      print(`imessage  sent to ${r.to}: ${preview(r.text.replaceAll("\uFFFC", "📎"))}`),
    );
    stopScript = runScript(discord, writer, intervalMs, log);
    return await life.done;
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** Waits (bounded) until the Discord connector reports `ok`; a problem shows in its own log lines. */
async function discordReady(handle: (req: Request) => Response | Promise<Response>): Promise<void> {
  const deadline = Date.now() + DISCORD_READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const res = await handle(new Request("http://127.0.0.1/healthz"));
    const health = (await res.json()) as { connectors?: { community_chat?: { state?: string } } };
    const state = health.connectors?.community_chat?.state;
    if (state === "ok" || state === "error") return;
    await Bun.sleep(25);
  }
}
