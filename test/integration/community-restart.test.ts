/**
 * The Discord connector's deadlines and its restart (issue hardening, items 3 and 4), in process with
 * the real discord.js against the fake Discord: a login that reaches no READY is abandoned after
 * GW_COMMUNITY_LOGIN_TIMEOUT_MS and retried, health saying why; a restart after a library fault (what
 * the process-level policy asks for) says `degraded` with the reason until the new link is up, and
 * messages written meanwhile are caught up, once.
 */
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import { faultOrigin } from "../../src/core/fault-origin.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT } from "../helpers/service.ts";

const discord = fakeDiscords();

async function world() {
  const { fake, ann, general } = await discord.home();
  return { fake, ann, general, allowlist: allowAnn(ann.id) };
}

describe("login deadline", () => {
  test("a login with no READY is abandoned at GW_COMMUNITY_LOGIN_TIMEOUT_MS and retried; health says why", async () => {
    const w = await world();
    w.fake.gateway.answerIdentify = false;
    const gw = await communityService(w.fake, {
      allowlist: w.allowlist,
      env: { GW_COMMUNITY_LOGIN_TIMEOUT_MS: "300" },
      wait: false,
    });
    await waitFor(() => (w.fake.gateway.identifies >= 2 ? true : undefined), "a second IDENTIFY");
    await gw.untilState("degraded");
    expect((await gw.health()).detail).toContain("the login did not finish within 300 ms");
    expect(
      gw.log.entries.filter((e) => e.msg === "Discord login failed; retrying").map((e) => e.obj),
    ).toContainEqual(expect.objectContaining({ err: expect.stringContaining("no READY") }));
    w.fake.gateway.answerIdentify = true;
    await gw.untilState("ok");
  });
});

describe("restart after a library fault", () => {
  test("degraded with the reason until the new link is up; what was written meanwhile is caught up once", async () => {
    const w = await world();
    const gw = await communityService(w.fake, { allowlist: w.allowlist });
    w.fake.message(w.general.id, { author: w.ann, content: "before" });
    const unread = async () =>
      (
        (await (await gw.request("GET", "/messages/unread", { headers: AGENT })).json()) as {
          messages: Envelope[];
        }
      ).messages.map((m) => m.text);
    await waitFor(async () => ((await unread()).length === 1 ? true : undefined), "the first message");

    const err = Object.assign(
      new TypeError("undefined is not an object (evaluating 'payload.d.session_id')"),
      {
        stack: "TypeError: x\n    at onMessage (/a/node_modules/@discordjs/ws/dist/index.js:978:34)",
      },
    );
    expect(gw.svc.restartConnectorOf(faultOrigin(err), err)).toBe(true);
    const health = await gw.health();
    expect(health.state).toBe("degraded");
    expect(health.detail).toContain("@discordjs/ws: undefined is not an object");
    w.fake.message(w.general.id, { author: w.ann, content: "while restarting", dispatch: false });
    await gw.untilState("ok");
    await waitFor(async () => ((await unread()).length === 2 ? true : undefined), "the caught-up message");
    expect(await unread()).toEqual(["before", "while restarting"]);

    const own = Object.assign(new Error("bug"), {
      stack: "Error: bug\n    at f (/a/src/ingest/ingest.ts:1:1)",
    });
    expect(gw.svc.restartConnectorOf(faultOrigin(own), own)).toBe(false);
  });
});
