/**
 * The fake Discords of one test file (src/demo/fake-discord). `fakeDiscords()`, called once at the top of
 * a file or a describe, registers an afterEach that stops every fake it started (after the services a
 * test started with communityService, which close when the test ends); `start(opts)` starts one, and
 * `home(opts)` starts one holding the world most Discord tests begin from: the user Ann (ann_user, "Ann"),
 * the guild Home and its #general, made in that order.
 */
import { afterEach } from "bun:test";
import {
  type FakeDiscord,
  type FakeDiscordOptions,
  startFakeDiscord,
} from "../../src/demo/fake-discord/server.ts";

export function fakeDiscords() {
  const fakes: FakeDiscord[] = [];
  afterEach(async () => {
    for (const f of fakes.splice(0)) await f.stop();
  });
  const start = async (opts: FakeDiscordOptions = {}): Promise<FakeDiscord> => {
    const fake = await startFakeDiscord(opts);
    fakes.push(fake);
    return fake;
  };
  const home = async (opts: FakeDiscordOptions = {}) => {
    const fake = await start(opts);
    const ann = fake.user({ username: "ann_user", global_name: "Ann" });
    const guild = fake.guild({ name: "Home" });
    const general = fake.channel(guild.id, { name: "general" });
    return { fake, ann, guild, general };
  };
  return { start, home };
}
