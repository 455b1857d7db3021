/**
 * Issue 29, "Bad input tried": random Discord payloads with other messages nested anywhere never put
 * another message's text, author or files in `raw` (test/evidence/fuzz/discord-raw.ts at scale 1 from a
 * fixed seed), and the item catches a mapping that keeps the payload as received.
 */
import { describe, expect, test } from "bun:test";
import { checkRaw, discordRawItems } from "../evidence/fuzz/discord-raw.ts";
import { fuzzTests } from "../helpers/fuzz.ts";

describe("another message's content in raw (scale 1, seed 20261124)", () => {
  fuzzTests(discordRawItems, 60_000, 300);

  test("the check itself sees a canary, lost content and a refused payload", () => {
    const ok = {
      id: "1400000000000000099",
      channel_id: "1300000000000000001",
      author: { id: "1100000000000000001", username: "ann_user" },
      content: "mine",
    };
    expect(checkRaw(ok)).toEqual([]);
    // A field raw.ts does not know, holding a snowflake, is kept: no canary there.
    expect(checkRaw({ ...ok, extra_id: "1500000000000000001" })).toEqual([]);
    expect(checkRaw({ ...ok, author: null })).toEqual(["the payload was refused by asDiscordMessage"]);
    // Own fields are kept, so a canary in the message's own author shows up: the check is not blind.
    const seen = checkRaw({ ...ok, author: { ...ok.author, username: "CANARY-1-user" } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toStartWith("raw holds another message's field");
  });
});
