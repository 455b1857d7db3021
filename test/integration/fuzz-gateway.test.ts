/**
 * Issue 15, "Bad input tried": malformed gateway frames from the fake Discord never crash the Discord
 * connector (test/evidence/fuzz/gateway.ts, each item at scale 1 from a fixed seed), and the
 * regression for the frames that used to end `gw serve`: payloads discord.js's handlers or gw's mapping
 * could not digest threw inside @discordjs/ws's un-awaited frame handler (an unhandled rejection, exit
 * 1), and a message nested too deep to serialise held its channel forever.
 */
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import { gatewayItems } from "../evidence/fuzz/gateway.ts";
import { communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { fuzzTests } from "../helpers/fuzz.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, allowAnn } from "../helpers/service.ts";

describe("malformed gateway frames (scale 1, seed 20261124)", () => fuzzTests(gatewayItems));

describe("regression: frames that ended gw serve or held a channel", () => {
  const discord = fakeDiscords();

  test("payloads discord.js or gw cannot digest, and one nested 60k deep, are dropped with a warning; the next message arrives", async () => {
    const { fake, ann, general } = await discord.home();
    const rejections: unknown[] = [];
    const record = (e: unknown) => void rejections.push(e);
    process.on("unhandledRejection", record);
    try {
      const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
      const good = fake.message(general.id, { author: ann, content: "before" });
      const bad = (over: Record<string, unknown>) => ({
        ...good,
        id: `${BigInt(good.id as string) - 1n}`,
        ...over,
      });
      fake.gateway.dispatch("MESSAGE_CREATE", null);
      fake.gateway.dispatch("MESSAGE_CREATE", bad({ author: null }));
      fake.gateway.dispatch("MESSAGE_CREATE", bad({ attachments: [null] }));
      fake.gateway.dispatch("MESSAGE_CREATE", bad({ member: "nope" }));
      fake.gateway.dispatch("MESSAGE_CREATE", bad({ content: { text: "an object" } }));
      fake.gateway.dispatch("GUILD_CREATE", null);
      // Valid in every field gw reads, but nested deeper than JSON.stringify can write back.
      const deep = `${"[".repeat(60_000)}${"]".repeat(60_000)}`;
      const frame = JSON.stringify({ op: 0, t: "MESSAGE_CREATE", s: 1, d: bad({}) });
      fake.gateway.sendRaw(`${frame.slice(0, -2)},"embeds":${deep}}}`);
      fake.message(general.id, { author: ann, content: "after" });

      const texts = await waitFor(async () => {
        const res = await gw.request("GET", "/messages/unread?limit=100", { headers: AGENT });
        const list = ((await res.json()) as { messages: Envelope[] }).messages.map((m) => m.text);
        return list.includes("after") ? list : undefined;
      }, "the message after the bad frames");
      expect(texts).toEqual(["before", "after"]);
      expect(rejections).toEqual([]);
      expect((await gw.health()).state).toBe("ok");
      const warnings = gw.log.entries.filter((e) => e.level === "warn").map((e) => e.msg);
      expect(
        warnings.filter((m) => m === "ignored a MESSAGE_CREATE without the fields gw needs"),
      ).toHaveLength(6);
      expect(warnings.filter((m) => m.startsWith("discord.js could not handle a "))).not.toHaveLength(0);
      expect(gw.log.entries.filter((e) => e.level === "error")).toEqual([]);
    } finally {
      process.off("unhandledRejection", record);
    }
  });
});
