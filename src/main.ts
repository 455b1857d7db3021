#!/usr/bin/env bun
/**
 * gw entry: argv -> command. The only place that reads the real process (env, argv, home) and calls
 * process.exit. Exit codes: 0 clean stop, 2 configuration error, 1 anything else.
 */
import { homedir } from "node:os";
import { type CommandContext, CommandError, EXIT_FAILURE, EXIT_OK } from "./commands/exit.ts";
import { COMMANDS, type CommandName, commandHelp, mainHelp } from "./commands/help.ts";
import { VERSION } from "./version.ts";

type Runner = (ctx: CommandContext) => Promise<number>;

// Each command is imported when it runs, so `gw --version` and `gw mcp` do not load the HTTP stack.
const RUNNERS: Record<CommandName, Runner> = {
  serve: async (ctx) => (await import("./commands/serve.ts")).serve(ctx),
  receiver: async (ctx) => (await import("./commands/receiver.ts")).receiver(ctx),
  mcp: async (ctx) => (await import("./commands/mcp.ts")).mcp(ctx),
  doctor: async (ctx) => (await import("./commands/doctor.ts")).doctor(ctx),
  demo: async (ctx) => (await import("./commands/demo.ts")).demo(ctx),
  webhooks: async (ctx) => (await import("./commands/webhooks.ts")).webhooks(ctx),
  quarantine: async (ctx) => (await import("./commands/quarantine.ts")).quarantine(ctx),
  allow: async (ctx) => (await import("./commands/allow.ts")).allow(ctx),
  docs: async (ctx) => (await import("./commands/docs.ts")).docs(ctx),
  service: async (ctx) => (await import("./commands/service.ts")).service(ctx),
};

/** Hidden: the Messages.app stand-in the demo uses as GW_OSASCRIPT_PATH (same binary). */
async function messagesStandIn(ctx: CommandContext): Promise<number> {
  const { runMessagesStandIn } = await import("./demo/messages-standin.ts");
  return runMessagesStandIn({
    argv: [...ctx.argv],
    stdin: await Bun.stdin.text(),
    env: ctx.env,
    stderr: ctx.stderr,
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const ctx: CommandContext = {
    argv,
    env: process.env,
    platform: process.platform,
    homeDir: homedir(),
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
  };
  const [first, ...rest] = argv;
  if (first === "--version" || first === "-v" || first === "version") {
    ctx.stdout.write(`gw ${VERSION}\n`);
    return EXIT_OK;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    ctx.stdout.write(mainHelp());
    return EXIT_OK;
  }
  if (first === "__messages-standin") return await messagesStandIn({ ...ctx, argv: rest });
  if (!(first in COMMANDS)) {
    ctx.stderr.write(`gw: unknown command "${first}"\n\n${mainHelp()}`);
    return EXIT_FAILURE;
  }
  const name = first as CommandName;
  if (rest.includes("--help") || rest.includes("-h")) {
    ctx.stdout.write(commandHelp(name));
    return EXIT_OK;
  }
  return await RUNNERS[name]({ ...ctx, argv: rest });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof CommandError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(
      `gw: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(EXIT_FAILURE);
  },
);
