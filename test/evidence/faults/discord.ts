/**
 * Discord faults against a real `gw serve` logged in (real discord.js) to the fake Discord
 * (src/demo/fake-discord, in this process): the gateway socket dropped again and again while friends
 * keep posting; a storm of 503s on message creation; a long 429 storm (retry_after 30 s, with
 * Discord's rate-limit headers) while an agent keeps sending; a short 429 storm (many in a row, each
 * waited out) and a global one. Sends must map to the documented errors (502 PLATFORM_SEND_FAILED, the
 * wait in details for a long 429), every message must be stored or posted exactly once, and the 401,
 * 403 and 429 answers the fake gave are counted against Discord's ban budget (10,000 in 10 minutes).
 */
import { type FakeDiscord, startFakeDiscord } from "../../../src/demo/fake-discord/server.ts";
import { entry, type Gw, ms, startGw, waitFor, workDir } from "./harness.ts";
import { type FaultRun, row } from "./types.ts";

export const DROPS = 8;
export const STORM_5XX = 30;
export const SENDS_5XX = 14;
export const LONG_429_SENDS = 50;
/** discord.js learns the bucket from the first 429 and fills it with the second; it refuses the rest itself. */
export const LONG_429_ASKED_MAX = 2;
const LONG_RETRY_AFTER_S = 30;
export const SHORT_429S = 8;
const BAN_BUDGET = 10_000;
const BAN_WINDOW_S = 600;

export interface DiscordDetails {
  drops: {
    posted: number;
    storedOnce: number;
    duplicates: number;
    resumes: number;
    identifies: number;
    state: string;
  };
  storm5xx: {
    ok: number;
    failed: number;
    codes: string[];
    posted: number;
    postedTwice: number;
    requests: number;
    replayBodySame: boolean;
  };
  long429: {
    failed: number;
    codes: string[];
    retryAfterMs: (number | null)[];
    answered429: number;
    otherChannelOk: boolean;
    ms: number;
  };
  short429: {
    status: number;
    answered429: number;
    posted: number;
    ms: number;
    globalStatus: number;
    globalAnswered: number;
  };
  invalid: { answered: number; seconds: number; per10Min: number; longPer10Min: number };
}

interface Answer {
  status: number;
  code: string | null;
  details: Record<string, unknown>;
  text: string;
}

export async function discordFaults(): Promise<FaultRun<DiscordDetails>> {
  const work = workDir("discord");
  const fake: FakeDiscord = await startFakeDiscord({ heartbeatIntervalMs: 1000 });
  let gw: Gw | null = null;
  const t0 = performance.now();
  let invalid = 0;
  /** A failure rule that counts the answers it gives. */
  const counted = (rule: Parameters<FakeDiscord["fail"]>[0], onAnswer: () => void) =>
    fake.fail({
      ...rule,
      when: () => {
        onAnswer();
        return true;
      },
    });
  const rateLimited = (
    path: string,
    retryAfterS: number,
    times: number,
    global: boolean,
    onAnswer: () => void,
  ) =>
    counted(
      {
        method: "POST",
        path,
        times,
        status: 429,
        body: { message: "You are being rate limited.", retry_after: retryAfterS, global },
        headers: {
          "retry-after": String(retryAfterS),
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(retryAfterS),
          "x-ratelimit-bucket": "fake-bucket",
          "x-ratelimit-scope": global ? "global" : "user",
          ...(global ? { "x-ratelimit-global": "true" } : {}),
        },
      },
      onAnswer,
    );
  try {
    const ann = fake.user({ username: "ann_user", global_name: "Ann" });
    const guild = fake.guild({ name: "Faults" });
    const [general, storm, limited, spare, patient] = ["general", "storm", "limited", "spare", "patient"].map(
      (name) => fake.channel(guild.id, { name }),
    ) as [{ id: string }, { id: string }, { id: string }, { id: string }, { id: string }];
    gw = await startGw({
      dir: work.dir,
      env: {
        GW_COMMUNITY_BOT_TOKEN: "fake-bot-token",
        GW_COMMUNITY_API_URL: fake.apiUrl,
        GW_RATE_LIMIT_BURST: "1000",
        GW_RATE_LIMIT_PER_CHANNEL_RPS: "1000",
      },
      allowlist: entry("community_chat", ann.id, "ann"),
    });
    const live = gw;
    const state = async () =>
      (live.health().then((h) => h.body?.connectors) as Promise<Record<string, { state: string }>>).then(
        (c) => c?.community_chat?.state ?? "?",
      );
    await waitFor(async () => ((await state()) === "ok" ? true : undefined), "Discord ready", 15_000);
    const counts = () =>
      live.db(
        (db) =>
          db
            .query(
              "SELECT text, COUNT(*) AS n FROM messages WHERE source = 'community_chat' AND direction = 'inbound' GROUP BY platform_id",
            )
            .all() as { text: string; n: number }[],
      );
    const say = (channelId: string, content: string) => fake.message(channelId, { author: ann, content });
    const seen = (texts: string[]) =>
      waitFor(
        () => {
          const have = new Set(counts().map((c) => c.text));
          return texts.every((t) => have.has(t)) ? true : undefined;
        },
        `${texts.length} messages stored`,
        15_000,
      );
    const send = async (channelId: string, text: string, key: string): Promise<Answer> => {
      const res = await live.post(
        "/messages/send",
        { channel_id: `community_chat:channel:${channelId}`, text },
        { "idempotency-key": key },
      );
      const error = (res.body?.error ?? null) as { code: string; details: Record<string, unknown> } | null;
      return { status: res.status, code: error?.code ?? null, details: error?.details ?? {}, text: res.text };
    };

    // Channels must have been seen inbound before gw may send to them.
    const opening = [general, storm, limited, spare, patient].map((c, i) => {
      say(c.id, `hello ${i}`);
      return `hello ${i}`;
    });
    await seen(opening);

    // 1. The gateway socket dropped DROPS times; friends keep posting through every drop.
    const posted: string[] = [...opening];
    for (let i = 0; i < DROPS; i++) {
      const resumed = fake.gateway.resumes;
      fake.gateway.drop();
      for (const n of [1, 2]) {
        const text = `drop ${i} message ${n}`;
        say(general.id, text);
        posted.push(text);
      }
      // The next drop must find the new socket, not the gap before it.
      await waitFor(() => (fake.gateway.resumes > resumed ? true : undefined), `RESUME after drop ${i + 1}`);
      await seen(posted);
    }
    await waitFor(async () => ((await state()) === "ok" ? true : undefined), "Discord ok after the drops");
    const stored = counts();
    const drops = {
      posted: posted.length,
      storedOnce: posted.filter((t) => stored.filter((c) => c.text === t).reduce((a, c) => a + c.n, 0) === 1)
        .length,
      duplicates: stored.filter((c) => c.n > 1).length,
      resumes: fake.gateway.resumes,
      identifies: fake.gateway.identifies,
      state: await state(),
    };

    // 2. A 503 storm on message creation: discord.js retries each send twice, then gw answers 502.
    const before5xx = fake.requests.length;
    counted(
      { method: "POST", path: `/channels/${storm.id}/messages`, status: 503, times: STORM_5XX },
      () => {},
    );
    const answers: Answer[] = [];
    for (let i = 0; i < SENDS_5XX; i++) answers.push(await send(storm.id, `storm ${i}`, `storm-key-${i}`));
    const firstFailed = answers.findIndex((a) => a.status !== 200);
    const replay =
      firstFailed >= 0 ? await send(storm.id, `storm ${firstFailed}`, `storm-key-${firstFailed}`) : null;
    const stormPosts = fake.posted.filter((p) => p.channelId === storm.id).map((p) => String(p.body.content));
    const storm5xx = {
      ok: answers.filter((a) => a.status === 200).length,
      failed: answers.filter((a) => a.status !== 200).length,
      codes: [
        ...new Set(
          answers
            .filter((a) => a.status !== 200)
            .map((a) => `${a.status} ${a.code} (status ${a.details.status})`),
        ),
      ],
      posted: stormPosts.length,
      postedTwice: stormPosts.length - new Set(stormPosts).size,
      requests: fake.requests.length - before5xx,
      replayBodySame: replay !== null && replay.text === answers[firstFailed]?.text,
    };
    const storm5xxOkTexts = answers
      .map((a, i) => (a.status === 200 ? `storm ${i}` : null))
      .filter((t) => t !== null);
    const postedMatches = JSON.stringify(stormPosts) === JSON.stringify(storm5xxOkTexts);

    // 3. A long 429 storm (retry_after 30 s): every send fails at once with the wait; other channels flow.
    let long = 0;
    rateLimited(`/channels/${limited.id}/messages`, LONG_RETRY_AFTER_S, 1_000, false, () => {
      long += 1;
      invalid += 1;
    });
    const tLong = performance.now();
    const longAnswers: Answer[] = [];
    for (let i = 0; i < LONG_429_SENDS; i++)
      longAnswers.push(await send(limited.id, `limited ${i}`, `limited-key-${i}`));
    const longMs = performance.now() - tLong;
    const elsewhere = await send(spare.id, "not held up", "spare-key");

    // 4. Short 429s, SHORT_429S in a row (each waited out), then a global one: one send each, posted once.
    let short = 0;
    rateLimited(`/channels/${patient.id}/messages`, 0.1, SHORT_429S, false, () => {
      short += 1;
      invalid += 1;
    });
    const tShort = performance.now();
    const patientAnswer = await send(patient.id, "patient", "patient-key");
    const shortMs = performance.now() - tShort;
    let globalAnswered = 0;
    rateLimited(`/channels/${spare.id}/messages`, 0.3, 2, true, () => {
      globalAnswered += 1;
      invalid += 1;
    });
    const globalAnswer = await send(spare.id, "after a global limit", "global-key");
    const patientPosts = fake.posted.filter((p) => p.body.content === "patient").length;

    const seconds = (performance.now() - t0) / 1000;
    const details: DiscordDetails = {
      drops,
      storm5xx,
      long429: {
        failed: longAnswers.filter((a) => a.status === 502 && a.code === "PLATFORM_SEND_FAILED").length,
        codes: [
          ...new Set(
            longAnswers.map((a) => `${a.status} ${a.code ?? ""} ${String(a.details.reason ?? "")}`.trim()),
          ),
        ],
        retryAfterMs: longAnswers.map((a) =>
          typeof a.details.retry_after_ms === "number" ? a.details.retry_after_ms : null,
        ),
        answered429: long,
        otherChannelOk: elsewhere.status === 200,
        ms: longMs,
      },
      short429: {
        status: patientAnswer.status,
        answered429: short,
        posted: patientPosts,
        ms: shortMs,
        globalStatus: globalAnswer.status,
        globalAnswered,
      },
      invalid: {
        answered: invalid,
        seconds,
        per10Min: Math.round((invalid / seconds) * BAN_WINDOW_S),
        // An agent that keeps sending into a long limit: what one reset window cost, every window.
        longPer10Min: long * (BAN_WINDOW_S / LONG_RETRY_AFTER_S),
      },
    };
    return { rows: rowsOf(details, postedMatches), notes: notesOf(), details };
  } finally {
    await gw?.stop();
    await fake.stop();
    work.remove();
  }
}

function rowsOf(d: DiscordDetails, postedMatches: boolean) {
  const { drops, storm5xx: s, long429: l, short429: sh, invalid } = d;
  return [
    row(
      `Discord gateway socket dropped ${DROPS} times while a friend kept posting`,
      DROPS,
      `${drops.storedOnce} of ${drops.posted} messages stored exactly once (${drops.duplicates} duplicates); ${drops.resumes} RESUMEs, ${drops.identifies} IDENTIFY in all; connector ${drops.state} after`,
      {
        "each stored once": drops.storedOnce === drops.posted && drops.duplicates === 0,
        "resumed every time": drops.resumes >= DROPS,
        "no new IDENTIFY": drops.identifies === 1,
        "ok after": drops.state === "ok",
      },
    ),
    row(
      `Discord 503 storm: ${STORM_5XX} in a row on message creation, ${SENDS_5XX} sends with Idempotency-Keys`,
      STORM_5XX,
      `${s.failed} sends answered ${s.codes.join(", ")} (3 requests each: discord.js retried twice), then ${s.ok} answered 200; ${s.posted} messages posted, exactly the 200s, ${s.postedTwice} twice; a replayed key got the same 502 body and posted nothing`,
      {
        "502 PLATFORM_SEND_FAILED":
          s.codes.length === 1 && (s.codes[0] ?? "").startsWith("502 PLATFORM_SEND_FAILED"),
        "storm used up by the failed sends": s.failed * 3 === STORM_5XX,
        "posted = the 200s, once each": postedMatches && s.postedTwice === 0,
        "replay identical": s.replayBodySame,
      },
    ),
    row(
      `Discord long 429 storm (retry_after ${LONG_RETRY_AFTER_S} s, rate-limit headers) under ${LONG_429_SENDS} sends`,
      LONG_429_SENDS,
      `all ${l.failed} answered 502 PLATFORM_SEND_FAILED (reason rate_limited, retry_after_ms ${summary(l.retryAfterMs)}) in ${ms(l.ms)} in all; Discord was asked ${l.answered429} times (discord.js learns the bucket, then refuses the rest itself); another channel's send went through at once`,
      {
        "502 with the wait":
          l.failed === LONG_429_SENDS && l.retryAfterMs.every((r) => r !== null && r > 3_000),
        [`at most ${LONG_429_ASKED_MAX} 429s for the bucket`]: l.answered429 <= LONG_429_ASKED_MAX,
        "other channels not held up": l.otherChannelOk,
      },
    ),
    row(
      `Discord short 429s: ${SHORT_429S} in a row (retry_after 0.1 s), then a global 429 (0.3 s)`,
      SHORT_429S + sh.globalAnswered,
      `the send waited them out and answered ${sh.status} after ${ms(sh.ms)}, posted ${sh.posted} time(s); after the global limit the send answered ${sh.globalStatus}`,
      {
        "200 after the storm": sh.status === 200 && sh.answered429 === SHORT_429S,
        "posted once": sh.posted === 1,
        "200 after the global limit": sh.globalStatus === 200,
      },
    ),
    row(
      "invalid requests gw made to Discord during all of the above (401, 403 and 429 answers)",
      invalid.answered,
      `${invalid.answered} in ${invalid.seconds.toFixed(1)} s of storms (${invalid.per10Min} per 10 minutes at that pace, ${pct(invalid.per10Min)} of Discord's ban budget of ${BAN_BUDGET.toLocaleString("en")}); an agent sending without pause into a ${LONG_RETRY_AFTER_S} s limit costs ${invalid.longPer10Min} per 10 minutes (${pct(invalid.longPer10Min)})`,
      {
        "under the budget even at storm pace": invalid.per10Min < BAN_BUDGET,
        "sustained sending under 1 % of it": invalid.longPer10Min < BAN_BUDGET / 100,
      },
    ),
  ];
}

const pct = (n: number) => `${((n / BAN_BUDGET) * 100).toFixed(1)} %`;

function summary(values: (number | null)[]): string {
  const nums = values.filter((v): v is number => v !== null);
  if (nums.length === 0) return "none";
  const lo = Math.round(Math.min(...nums));
  const hi = Math.round(Math.max(...nums));
  return lo === hi ? `${lo}` : `${lo}–${hi}`;
}

function notesOf(): string[] {
  return [
    "Discord: gw serve ran with its production Discord tuning (10 s REST timeout, 2 retries, 429 waits over 3 s refused) against the fake Discord; only GW_RATE_LIMIT_BURST and GW_RATE_LIMIT_PER_CHANNEL_RPS were raised so gw's own limiter stays out of the way. Invalid requests are counted where Discord counts them: the 401, 403 and 429 answers the fake gave.",
  ];
}
