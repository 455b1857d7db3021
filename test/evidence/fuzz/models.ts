/**
 * Model checks under concurrency (reliability.md B2, B3, L3).
 * - Rate limiter: the real per-channel limiter with an injected clock against an exact token bucket
 *   (integer arithmetic): for every schedule and every window [t1, t2] of one channel, the accepted
 *   sends are at most burst + rate·(t2 − t1); each 429's Retry-After is a whole number ≥ 1; and the
 *   decisions equal the exact model's except within 1e-9 of a token (float rounding, counted).
 * - The same bound through POST /messages/send (429s carry the envelope and an integer Retry-After).
 * - Idempotency: random interleavings of sequential and concurrent sends with repeated keys, reordered
 *   and changed bodies and platform failures: a replay is byte-identical to the first answer, another
 *   body is 422 IDEMPOTENCY_KEY_REUSE, concurrent duplicates wait for the first, and platform sends =
 *   keys that ran (one each) + requests without a key.
 */
import fc from "fast-check";
import { createRateLimiter } from "../../../src/send/rate-limit.ts";
import { answerProblem } from "./envelope.ts";
import { type ApiService, AUTH, DISCORD_CHANNEL, DM, withApiService } from "./harness.ts";
import { checkProperty, type FuzzItem, merge, type Outcome } from "./types.ts";

/** Rates as exact fractions p/q tokens per second (what GW_RATE_LIMIT_PER_CHANNEL_RPS accepts). */
const RATES: [number, number][] = [
  [1, 1],
  [1, 2],
  [1, 10],
  [3, 10],
  [7, 10],
  [5, 2],
  [10, 1],
  [1, 3],
  [1, 100],
];

/** The token bucket in integer units of 1/(1000·q) token: exact for integer-millisecond schedules. */
function exactBucket(p: number, q: number, burst: number) {
  const unit = 1000 * q;
  const state = new Map<string, { units: number; at: number }>();
  return {
    unit,
    take(channel: string, now: number): { allowed: boolean; retryAfterS: number; units: number } {
      const prev = state.get(channel);
      const units = prev ? Math.min(burst * unit, prev.units + (now - prev.at) * p) : burst * unit;
      if (units >= unit) {
        state.set(channel, { units: units - unit, at: now });
        return { allowed: true, retryAfterS: 0, units };
      }
      state.set(channel, { units, at: now });
      return { allowed: false, retryAfterS: Math.max(1, Math.ceil((unit - units) / (1000 * p))), units };
    },
    /** Follows the real limiter where float rounding made it decide the other way at a whole token. */
    follow(channel: string, allowed: boolean): void {
      const s = state.get(channel);
      if (s) s.units += allowed ? -unit : unit;
    },
  };
}

const schedules = fc.array(
  fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constantFrom(0, 1, 999, 1000, 1001)),
    fc.constantFrom("a", "b", "c"),
  ),
  { maxLength: 200, size: "max" },
);

/** What the two limiter properties draw: a rate p/q, a burst of 1–20 and a schedule of sends. */
const limiterCase = fc.tuple(fc.constantFrom(...RATES), fc.integer({ min: 1, max: 20 }), schedules);

/** The real limiter at p/q tokens a second and `burst`, on a clock at `t.now` ms that the property moves. */
function limiterAt(p: number, q: number, burst: number) {
  const t = { now: 1_000_000 };
  return { t, limiter: createRateLimiter({ clock: { now: () => t.now }, ratePerS: p / q, burst }) };
}

export const rateLimitModel: FuzzItem = {
  id: "rate-limit-model",
  tried:
    "The per-channel token bucket with an injected clock: random rates (exact fractions, 0.01–10/s), bursts 1–20 and schedules of up to 200 sends over 3 channels with gaps of 0–5 s, against an exact integer model",
  held: "accepted in every window [t1,t2] of a channel ≤ burst + rate·(t2−t1); every refusal has a whole Retry-After ≥ 1 within 1 s of the exact model's; decisions equal the exact model's except within 1e-9 token of a whole token (counted)",
  async run({ scale, seed }): Promise<Outcome> {
    let boundary = 0;
    const out = await checkProperty(
      fc.property(limiterCase, ([[p, q], burst, schedule]) => {
        const { t, limiter } = limiterAt(p, q, burst);
        const model = exactBucket(p, q, burst);
        const accepted = new Map<string, number[]>();
        for (const [dt, ch] of schedule) {
          t.now += dt;
          const real = limiter.take(ch);
          const exact = model.take(ch, t.now);
          if (real.allowed !== exact.allowed) {
            // Float rounding right at a whole token is tolerated (and counted); anything else is not.
            if (Math.abs(exact.units / model.unit - 1) > 1e-9)
              throw new Error(
                `at ${t.now} ms channel ${ch}: limiter ${real.allowed}, exact model ${exact.allowed} (${exact.units / model.unit} tokens)`,
              );
            boundary++;
            model.follow(ch, real.allowed);
          }
          if (!real.allowed) {
            if (!Number.isInteger(real.retryAfterS) || real.retryAfterS < 1)
              throw new Error(`Retry-After ${real.retryAfterS}`);
            if (!exact.allowed && Math.abs(real.retryAfterS - exact.retryAfterS) > 1)
              throw new Error(`Retry-After ${real.retryAfterS} s, exact ${exact.retryAfterS} s`);
          } else accepted.set(ch, [...(accepted.get(ch) ?? []), t.now]);
        }
        for (const [ch, times] of accepted)
          for (let i = 0; i < times.length; i++)
            for (let j = i; j < times.length; j++) {
              const span = ((times[j] as number) - (times[i] as number)) / 1000;
              if (j - i + 1 > burst + (p / q) * span + 1e-9)
                throw new Error(
                  `channel ${ch}: ${j - i + 1} accepted within ${span} s (burst ${burst}, rate ${p}/${q})`,
                );
            }
      }),
      1000 * scale,
      seed,
    );
    return {
      ...out,
      notes: [
        `${boundary} decision(s) differed from the exact model only by float rounding at a whole token`,
      ],
    };
  },
};

export const retryAfterHonest: FuzzItem = {
  id: "retry-after-honest",
  tried:
    "After a random schedule, the first 429 of a channel is retried exactly Retry-After seconds later (same limiter, injected clock)",
  held: "the retry is accepted: Retry-After never names a time that is still too early",
  async run({ scale, seed }): Promise<Outcome> {
    return checkProperty(
      fc.property(limiterCase, ([[p, q], burst, schedule]) => {
        const { t, limiter } = limiterAt(p, q, burst);
        for (const [dt, ch] of schedule) {
          t.now += dt;
          const r = limiter.take(ch);
          if (!r.allowed) {
            t.now += r.retryAfterS * 1000;
            if (!limiter.take(ch).allowed)
              throw new Error(
                `refused again ${r.retryAfterS} s after a 429 on ${ch} (rate ${p}/${q}, burst ${burst})`,
              );
            return;
          }
        }
      }),
      1000 * scale,
      seed,
    );
  },
};

const send = async (
  s: ApiService,
  body: unknown,
  key: string | null,
): Promise<{ status: number; text: string; headers: Headers }> => {
  const res = await s.handle(
    new Request("http://localhost/messages/send", {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, text: await res.text(), headers: res.headers };
};

export const rateLimitHttp: FuzzItem = {
  id: "rate-limit-http",
  tried:
    "Schedules of sends through POST /messages/send to two channels (burst 3, 0.5/s, injected clock; gaps 0–4 s)",
  held: "accepted per channel ≤ burst + rate·t; every 429 is RATE_LIMITED in the envelope with Retry-After = details.retry_after_s, a whole number ≥ 1",
  async run({ scale, seed }): Promise<Outcome> {
    let sends = 0;
    const out = await checkProperty(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 4000 }), fc.constantFrom(DM, DISCORD_CHANNEL)), {
          minLength: 5,
          maxLength: 40,
          size: "max",
        }),
        async (schedule) => {
          return withApiService(
            { GW_RATE_LIMIT_BURST: "3", GW_RATE_LIMIT_PER_CHANNEL_RPS: "0.5" },
            async (s) => {
              const start = s.clock.now();
              const accepted = new Map<string, number>();
              for (const [dt, ch] of schedule) {
                s.clock.advance(dt);
                sends++;
                const r = await send(s, { channel_id: ch, text: "x" }, null);
                if (r.status === 200) accepted.set(ch, (accepted.get(ch) ?? 0) + 1);
                else {
                  const problem = answerProblem(r.status, r.headers, r.text, "POST");
                  if (problem) throw new Error(problem);
                  const e = JSON.parse(r.text).error;
                  if (r.status !== 429 || e.code !== "RATE_LIMITED") throw new Error(`${r.status} ${r.text}`);
                  if (r.headers.get("retry-after") !== String(e.details.retry_after_s))
                    throw new Error(
                      `Retry-After ${r.headers.get("retry-after")} vs details ${e.details.retry_after_s}`,
                    );
                }
                const t = (s.clock.now() - start) / 1000;
                if ((accepted.get(ch) ?? 0) > 3 + 0.5 * t + 1e-9)
                  throw new Error(`${accepted.get(ch)} accepted on ${ch} by ${t} s`);
              }
            },
          );
        },
      ),
      10 * scale,
      seed,
    );
    return { ...out, cases: sends };
  },
};

type Op =
  | { kind: "seq"; key: string | null; body: number; order: boolean; fail: boolean; dt: number }
  | { kind: "burst"; requests: { key: string | null; body: number; order: boolean }[]; hold: boolean };

const bodyOf = (n: number, order: boolean) => {
  const text = ["hello", "other", "x".repeat(300)][n] as string;
  return order ? { channel_id: DM, text } : { text, channel_id: DM };
};

export const idempotencyModel: FuzzItem = {
  id: "idempotency-model",
  tried:
    "Random interleavings through POST /messages/send: sequential and concurrent requests (the platform send held open) reusing 3 keys and no key, bodies with reordered keys (same body) or other text, platform 502s, the clock moved",
  held: "same key + same body → the first answer byte for byte (2xx and 502 alike), same key + other body → 422 IDEMPOTENCY_KEY_REUSE, concurrent duplicates → one platform send and one answer; platform sends = keys that ran + keyless requests",
  async run({ scale, seed }): Promise<Outcome> {
    let requests = 0;
    const key = fc.constantFrom("k-a", "k-b", "k-c", null);
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant("seq" as const),
        key,
        body: fc.integer({ min: 0, max: 2 }),
        order: fc.boolean(),
        fail: fc.constantFrom(false, false, false, true),
        dt: fc.integer({ min: 0, max: 5_000 }),
      }),
      fc.record({
        kind: fc.constant("burst" as const),
        requests: fc.array(fc.record({ key, body: fc.integer({ min: 0, max: 2 }), order: fc.boolean() }), {
          minLength: 2,
          maxLength: 6,
        }),
        hold: fc.boolean(),
      }),
    );
    const out = await checkProperty(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12, size: "max" }), async (ops) => {
        return withApiService({ GW_RATE_LIMIT_BURST: "1000000" }, async (s) => {
          const done = new Map<string, { body: number; status: number; text: string }>();
          let expectedSends = 0;
          for (const o of ops) {
            if (o.kind === "seq") {
              s.clock.advance(o.dt);
              const known = o.key ? done.get(o.key) : undefined;
              if (o.fail && !known) s.device.failNext("PLATFORM_SEND_FAILED");
              requests++;
              const r = await send(s, bodyOf(o.body, o.order), o.key);
              if (known) {
                if (known.body === o.body) {
                  if (r.status !== known.status || r.text !== known.text)
                    throw new Error(
                      `replay of ${o.key}: ${r.status} ${r.text} != ${known.status} ${known.text}`,
                    );
                } else if (r.status !== 422 || !r.text.includes('"IDEMPOTENCY_KEY_REUSE"'))
                  throw new Error(`other body under ${o.key}: ${r.status} ${r.text}`);
              } else {
                expectedSends++;
                const want = o.fail ? 502 : 200;
                if (r.status !== want) throw new Error(`first use of ${o.key}: ${r.status} ${r.text}`);
                if (o.key) done.set(o.key, { body: o.body, status: r.status, text: r.text });
              }
            } else {
              const release = o.hold ? s.device.holdNext() : () => {};
              requests += o.requests.length;
              const pending = o.requests.map((r) => send(s, bodyOf(r.body, r.order), r.key));
              for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
              release();
              const answers = await Promise.all(pending);
              const winners = new Map<string, { body: number; status: number; text: string }>();
              o.requests.forEach((r, i) => {
                const a = answers[i] as { status: number; text: string };
                if (r.key === null) {
                  expectedSends++;
                  if (a.status !== 200) throw new Error(`keyless request in a burst: ${a.status} ${a.text}`);
                  return;
                }
                const known = done.get(r.key) ?? winners.get(r.key);
                if (known && known.body === r.body) {
                  if (a.text !== known.text || a.status !== known.status)
                    throw new Error(
                      `duplicate of ${r.key} in a burst: ${a.status} ${a.text} != ${known.text}`,
                    );
                } else if (a.status === 200 && !known) {
                  winners.set(r.key, { body: r.body, status: 200, text: a.text });
                  expectedSends++;
                } else if (a.status !== 422 || !a.text.includes('"IDEMPOTENCY_KEY_REUSE"'))
                  throw new Error(`key ${r.key} in a burst: ${a.status} ${a.text}`);
              });
              // A 422 answered before its key's winner was seen in firing order must have another body.
              o.requests.forEach((r, i) => {
                const a = answers[i] as { status: number };
                const w = r.key ? (done.get(r.key) ?? winners.get(r.key)) : undefined;
                if (a.status === 422 && w && w.body === r.body)
                  throw new Error(`422 for the winner's own body under ${r.key}`);
              });
              for (const [k, w] of winners) done.set(k, w);
            }
          }
          if (s.device.sends.length !== expectedSends)
            throw new Error(`${s.device.sends.length} platform sends, expected ${expectedSends}`);
        });
      }),
      40 * scale,
      seed,
    );
    return { ...out, cases: requests };
  },
};

export const modelItems = [rateLimitModel, retryAfterHonest, rateLimitHttp, idempotencyModel];
export { merge };
