/**
 * The fake Discord in a process of its own, for tests that must freeze or kill it (SIGSTOP: the
 * sockets stay open and nothing answers, not even a close). It builds one world (a friend, a guild
 * with #general, the friend's DM), prints `{apiUrl, friend, general, dm}` as one JSON line on stdout,
 * then reads commands as JSON lines on stdin: `{"say": channelId, "text": "…"}` posts as the friend,
 * `{"raw": frame}` puts a frame as is on every gateway socket.
 */
import { startFakeDiscord } from "../../src/demo/fake-discord/server.ts";

const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
const friend = fake.user({ username: "ann_user", global_name: "Ann" });
const guild = fake.guild({ name: "Home" });
const general = fake.channel(guild.id, { name: "general" });
const dm = fake.dm(friend);
process.stdout.write(
  `${JSON.stringify({ apiUrl: fake.apiUrl, friend: friend.id, general: general.id, dm: dm.id })}\n`,
);

let buffered = "";
for await (const chunk of Bun.stdin.stream()) {
  buffered += new TextDecoder().decode(chunk);
  for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    const cmd = JSON.parse(line) as { say?: string; text?: string; raw?: string };
    if (cmd.say) fake.message(cmd.say, { author: friend, content: cmd.text ?? "" });
    if (cmd.raw) fake.gateway.sendRaw(cmd.raw);
  }
}
await fake.stop();
