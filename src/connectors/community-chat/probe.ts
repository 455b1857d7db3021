/**
 * What `gw doctor` asks Discord (runner, plain REST without discord.js): whether the bot token is
 * accepted (`GET /users/@me`) and whether the Message Content intent is enabled for the application
 * (`GET /applications/@me` flags), each with what to do when it is not. Bounded by PROBE_TIMEOUT_MS.
 */
import { TOKEN_REJECTED } from "./platform-errors.ts";

export const PROBE_TIMEOUT_MS = 10_000;
/** Application flags: the Message Content intent, approved (verified bots) or limited (under 100 servers). */
const MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);

export type ProbeLine = { ok: boolean; what: string; fix?: string };

export async function probeDiscord(
  apiUrl: string,
  token: string,
  fetcher: typeof fetch,
): Promise<ProbeLine[]> {
  const get = async (route: string) => {
    const res = await fetcher(`${apiUrl.replace(/\/+$/, "")}/v10${route}`, {
      headers: { authorization: `Bot ${token}` },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
  };
  let me: Awaited<ReturnType<typeof get>>;
  try {
    me = await get("/users/@me");
  } catch (err) {
    return [
      {
        ok: false,
        what: `cannot reach Discord at ${apiUrl}: ${(err as Error).message}`,
        fix: "check the network (or GW_COMMUNITY_API_URL)",
      },
    ];
  }
  if (me.status === 401)
    return [{ ok: false, what: "Discord rejected GW_COMMUNITY_BOT_TOKEN", fix: TOKEN_REJECTED }];
  if (me.status !== 200)
    return [{ ok: false, what: `Discord answered ${me.status} to the token check`, fix: "try again later" }];
  const lines: ProbeLine[] = [
    {
      ok: true,
      what: `Discord bot token accepted (bot ${String(me.body.username)}, id ${String(me.body.id)})`,
    },
  ];
  const app = await get("/applications/@me").catch(() => null);
  const flags = typeof app?.body.flags === "number" ? app.body.flags : null;
  if (flags === null)
    lines.push({
      ok: true,
      what: "Discord application flags unavailable; Message Content intent not checked",
    });
  else if ((flags & MESSAGE_CONTENT_FLAGS) === 0)
    lines.push({
      ok: false,
      what: "the Message Content intent is off for this bot: gw would be refused (close 4014)",
      fix: "Developer Portal → your application → Bot → Privileged Gateway Intents: enable Message Content",
    });
  else
    lines.push({
      ok: true,
      what: "Discord Message Content intent enabled (the reaction intents gw also asks for need no switch)",
    });
  return lines;
}
