/**
 * Properties of the webhook receiver's HTTP face (createReceiverApp, as `gw receiver` builds it, with
 * an injected clock, the real intake over an in-memory journal whose accepted jobs are recorded, and
 * agent runs that end at once): hostile requests never get a 5xx
 * and every error is the envelope; a delivery signed as gw serve signs it is accepted once; any
 * single-bit flip in the body, X-GW-Signature, the delivery id or the timestamp is 401 and runs
 * nothing; a signed timestamp ±4 min from the receiver's clock is accepted, ±6 min is 401; and the two
 * known-answer vectors of reliability.md §1.2 verify.
 */
import fc from "fast-check";
import type { Envelope } from "../../../src/core/envelope.ts";
import { createReceiverApp } from "../../../src/receiver/app.ts";
import type { Job } from "../../../src/receiver/channel-workers.ts";
import { createIntake } from "../../../src/receiver/intake.ts";
import { createSeenSet } from "../../../src/receiver/seen-set.ts";
import { openReceiverJournal } from "../../../src/store/receiver-journal.ts";
import {
  gwSignature,
  signedHeaders,
  standardSignature,
  verifyStandardSignature,
} from "../../../src/webhooks/sign.ts";
import { recordingLogger } from "../../helpers/logger.ts";
import { headerValue, invalidUtf8, nastyString } from "./arbitraries.ts";
import { answerProblem } from "./envelope.ts";
import { checkProperty, type FuzzItem, merge, type Outcome, type RunOptions } from "./types.ts";

export const SECRET = "receiver-fuzz-secret-0123456789abcdef";
const NOW_S = 1_800_000_000;

export function receiverUnderTest(secret = SECRET) {
  let nowMs = NOW_S * 1000;
  const submitted: Job[] = [];
  const clock = { now: () => nowMs };
  const log = recordingLogger();
  const intake = createIntake({
    journal: openReceiverJournal(":memory:"),
    seen: createSeenSet(10_000),
    run: async () => "done",
    queueMax: Number.MAX_SAFE_INTEGER,
    idleTtlMs: 1,
    clock,
    log,
  });
  const recording = {
    ...intake,
    accept(job: Job, envelopeJson: string) {
      const verdict = intake.accept(job, envelopeJson);
      if (verdict === "accepted") submitted.push(job);
      return verdict;
    },
  };
  const app = createReceiverApp({ secret, intake: recording, clock, log, version: "fuzz" });
  return {
    fetch: (r: Request) => app.fetch(r),
    submitted,
    setNowS: (s: number) => {
      nowMs = s * 1000;
    },
  };
}

type FreshReceiver = ReturnType<typeof receiverUnderTest>;

export function envelope(i: number, text = "hello"): Envelope {
  return {
    id: `msg_${String(i).padStart(26, "0")}`,
    source: "community_chat",
    channel_id: "community_chat:channel:1300000000000000001",
    channel_type: "group",
    sender: { id: "1100000000000000001", display_name: "Ann", person_id: "ann" },
    text,
    attachments: [],
    reply_to: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    direction: "inbound",
    raw: {},
  };
}

const post = (headers: Record<string, string> | Headers, body: string | Uint8Array) =>
  new Request("http://localhost/webhook", { method: "POST", headers, body });

async function answer(r: FreshReceiver, req: Request, method: string) {
  const res = await r.fetch(req);
  const text = await res.text();
  return { status: res.status, problem: answerProblem(res.status, res.headers, text, method) };
}

const uuid = fc.uuid();

/** A property item whose `run` starts from a fresh receiverUnderTest() (the fuzz secret, the clock at NOW_S). */
function onFreshReceiver(
  run: (r: FreshReceiver, o: RunOptions) => Promise<Outcome>,
  about: Omit<FuzzItem, "run">,
): FuzzItem {
  return { ...about, run: (o) => run(receiverUnderTest(), o) };
}

/** Hostile requests of every shape to one receiver (receiverRequests). */
async function hostileRequests(r: FreshReceiver, { scale, seed }: RunOptions): Promise<Outcome> {
  const body = fc.oneof(
    fc.jsonValue().map((v) => JSON.stringify(v) ?? "null"),
    fc
      .record(
        {
          id: nastyString,
          source: fc.constantFrom("community_chat", "device_messenger", "x"),
          channel_id: nastyString,
          text: fc.oneof(fc.string(), fc.integer()),
          attachments: fc.oneof(fc.constant([]), fc.jsonValue()),
        },
        { requiredKeys: [] },
      )
      .map((partial) => JSON.stringify({ ...envelope(1), ...partial })),
    fc.constant(JSON.stringify(envelope(2))),
    fc.string(),
    invalidUtf8,
    fc.constant(""),
  );
  const spec = fc.record({
    method: fc.constantFrom("POST", "POST", "POST", "GET", "PUT", "DELETE", "HEAD"),
    path: fc.constantFrom("/webhook", "/webhook", "/webhook/", "/healthz", "/", "/WEBHOOK", "/webhook?x=1"),
    body,
    sign: fc.constantFrom("right", "right", "wrong", "none", "garbage", "twice"),
    deliveryId: fc.oneof(uuid, fc.constant(null), headerValue),
    standard: fc.constantFrom("right", "none", "partial", "stale", "mismatched-id"),
    declaredLength: fc.constantFrom(null, null, null, "5000000", "-1", "abc"),
    ping: fc.boolean(),
  });
  return checkProperty(
    fc.asyncProperty(spec, async (s) => {
      const bytes = typeof s.body === "string" ? new TextEncoder().encode(s.body) : s.body;
      const id = s.deliveryId ?? "";
      const h = new Headers({ "content-type": "application/json" });
      const signed = signedHeaders(SECRET, id, s.standard === "stale" ? NOW_S - 3_600 : NOW_S, "");
      const sig = gwSignature(SECRET, bytes);
      if (s.sign === "right") h.set("x-gw-signature", sig);
      if (s.sign === "wrong") h.set("x-gw-signature", gwSignature(`${SECRET}x`, bytes));
      if (s.sign === "garbage") h.set("x-gw-signature", "sha256=zz");
      if (s.sign === "twice") {
        h.append("x-gw-signature", sig);
        h.append("x-gw-signature", sig);
      }
      if (s.deliveryId !== null) h.set("x-gw-delivery-id", id);
      if (s.standard !== "none") {
        h.set("webhook-id", s.standard === "mismatched-id" ? `${id}x` : id);
        h.set("webhook-timestamp", signed["webhook-timestamp"]);
        if (s.standard !== "partial")
          h.set("webhook-signature", standardSignature(SECRET, id, signed["webhook-timestamp"], bytes));
      }
      if (s.declaredLength) h.set("content-length", s.declaredLength);
      if (s.ping) h.set("x-gw-event", "ping");
      let req: Request;
      try {
        req = new Request(`http://localhost${s.path}`, {
          method: s.method,
          headers: h,
          ...(s.method === "GET" || s.method === "HEAD" ? {} : { body: bytes }),
        });
      } catch {
        return;
      }
      const before = r.submitted.length;
      const { status, problem } = await answer(r, req, s.method);
      if (problem)
        throw new Error(`${problem} for ${JSON.stringify({ ...s, body: String(s.body).slice(0, 100) })}`);
      const fullyRight =
        s.sign === "right" && s.deliveryId !== null && id !== "" && ["right", "none"].includes(s.standard);
      if (r.submitted.length > before && !fullyRight)
        throw new Error(`dispatched without a valid signature: ${JSON.stringify(s)}`);
      // The delivery id as sent: fetch trims a header value (" " goes out empty, and that is a
      // missing id, 400, found by seed 1278922063).
      const sentId = req.headers.get("x-gw-delivery-id") ?? "";
      if (s.method === "POST" && s.path === "/webhook" && !s.declaredLength && s.sign === "wrong" && sentId)
        if (status !== 401) throw new Error(`wrong signature answered ${status}`);
    }),
    300 * scale,
    seed,
  );
}

export const receiverRequests = onFreshReceiver(hostileRequests, {
  id: "receiver-requests",
  tried:
    "Hostile requests to the receiver: random methods and paths, missing/duplicated/garbage X-GW-Signature, X-GW-Delivery-Id and webhook-* headers, bodies of arbitrary JSON, envelopes with wrong fields, raw text, invalid UTF-8, empty, over 4 MiB declared; correctly signed non-envelopes",
  held: "no 5xx; every non-2xx is the error envelope with a documented code; nothing unsigned is dispatched; 401 for every wrong signature, 400 for malformed signed bodies",
});

type Part =
  | "body"
  | "x-gw-signature"
  | "x-gw-delivery-id"
  | "webhook-id"
  | "both-ids"
  | "webhook-timestamp"
  | "webhook-signature";

/** `s` with one bit of its `index`-th UTF-16 unit flipped (kept within Latin-1 for header values). */
function flipChar(s: string, index: number, bit: number): string {
  const i = index % s.length;
  const c = s.charCodeAt(i) ^ (1 << bit);
  return s.slice(0, i) + String.fromCharCode(c) + s.slice(i + 1);
}

/** Signed deliveries, each once as signed and once with one bit flipped (signatureFlips). */
async function flippedDeliveries(r: FreshReceiver, { scale, seed }: RunOptions): Promise<Outcome> {
  let skipped = 0;
  let n = 0;
  const parts: Part[] = [
    "body",
    "x-gw-signature",
    "x-gw-delivery-id",
    "webhook-id",
    "both-ids",
    "webhook-timestamp",
    "webhook-signature",
  ];
  const out = await checkProperty(
    fc.asyncProperty(
      fc.string({ maxLength: 300 }),
      uuid,
      fc.constantFrom(...parts),
      fc.nat(),
      fc.integer({ min: 0, max: 7 }),
      async (text, deliveryId, part, index, bit) => {
        n++;
        const body = JSON.stringify(envelope(n, text));
        const headers: Record<string, string> = { ...signedHeaders(SECRET, deliveryId, NOW_S, body) };
        // The unflipped delivery is accepted (and a flipped one with the same id must not be a replay).
        const ok = await r.fetch(post(headers, body));
        if (ok.status !== 204) throw new Error(`a correctly signed delivery answered ${ok.status}`);
        let bytes: Uint8Array = new TextEncoder().encode(body);
        const fresh = crypto.randomUUID();
        const h: Record<string, string> = { ...signedHeaders(SECRET, fresh, NOW_S, body) };
        if (part === "body") {
          bytes = bytes.slice();
          const i = index % bytes.length;
          bytes[i] = (bytes[i] as number) ^ (1 << bit);
        } else if (part === "both-ids") {
          const flipped = flipChar(fresh, index, bit);
          h["x-gw-delivery-id"] = flipped;
          h["webhook-id"] = flipped;
        } else {
          h[part] = flipChar(h[part] as string, index, bit);
        }
        let req: Request;
        try {
          req = post(h, bytes);
          // The fetch API trims surrounding spaces of header values: a flip that the trim undoes
          // leaves the header as it was signed, so it is not a change that reaches the receiver.
          if (
            part !== "body" &&
            part !== "both-ids" &&
            req.headers.get(part) === signedHeaders(SECRET, fresh, NOW_S, body)[part]
          ) {
            skipped++;
            return;
          }
        } catch {
          skipped++;
          return;
        }
        const before = r.submitted.length;
        const { status, problem } = await answer(r, req, "POST");
        if (problem) throw new Error(problem);
        if (status !== 401) throw new Error(`flip in ${part} answered ${status}`);
        if (r.submitted.length !== before) throw new Error(`flip in ${part} was dispatched`);
      },
    ),
    500 * scale,
    seed,
  );
  return {
    ...out,
    notes: [
      `${skipped} flips the fetch API cannot send (a NUL, CR or LF in a header value, or a trimmed space) skipped`,
    ],
  };
}

export const signatureFlips = onFreshReceiver(flippedDeliveries, {
  id: "receiver-signature-flips",
  tried:
    "Signed deliveries (gw serve's headers, random envelopes) with a single bit flipped in the body, X-GW-Signature, X-GW-Delivery-Id, webhook-id, both ids, webhook-timestamp or webhook-signature; plus the unflipped round trip",
  held: "the round trip is 204 and dispatched once; every flip is 401 and dispatches nothing (flips the fetch API cannot send are skipped and counted)",
});

/** A clock offset in seconds and whether it is within the tolerance: ±4 min, ±6 min and beyond, the edges. */
const skewOffset = fc.oneof(
  fc.integer({ min: -240, max: 240 }).map((s) => ({ s, ok: true })),
  fc
    .integer({ min: 360, max: 10 * 365 * 86_400 })
    .chain((s) => fc.constantFrom({ s, ok: false }, { s: -s, ok: false })),
  fc.constantFrom({ s: 300, ok: true }, { s: -300, ok: true }, { s: 301, ok: false }, { s: -301, ok: false }),
);

/** Signed deliveries stamped off the receiver's clock by a skewOffset (clockSkew). */
async function skewedDeliveries(r: FreshReceiver, { scale, seed }: RunOptions): Promise<Outcome> {
  return checkProperty(
    fc.asyncProperty(skewOffset, fc.uuid(), async ({ s, ok }, id) => {
      r.setNowS(NOW_S);
      const body = JSON.stringify(envelope(7));
      const h = signedHeaders(SECRET, id, NOW_S + s, body);
      const before = r.submitted.length;
      const res = await r.fetch(post({ ...h }, body));
      await res.arrayBuffer();
      if (res.status !== (ok ? 204 : 401)) throw new Error(`offset ${s} s answered ${res.status}`);
      if (!ok && r.submitted.length !== before) throw new Error(`offset ${s} s was dispatched`);
    }),
    200 * scale,
    seed,
  );
}

export const clockSkew = onFreshReceiver(skewedDeliveries, {
  id: "receiver-clock-skew",
  tried:
    "Signed deliveries whose webhook-timestamp is off the receiver's clock by a random amount: within ±4 min, beyond ±6 min (F8)",
  held: "100 % of ±4 min accepted (204), 100 % of ±6 min and beyond rejected (401), nothing stale dispatched",
});

/** The published vectors, computed and put through receivers with their secrets (knownAnswers). */
async function checkKnownAnswers(): Promise<Outcome> {
  const failures: string[] = [];
  const github = gwSignature("It's a Secret to Everybody", "Hello, World!");
  if (github !== "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
    failures.push(`GitHub vector: ${github}`);
  const key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const std = standardSignature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
  if (std !== "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    failures.push(`Standard Webhooks vector: ${std}`);
  const body = new TextEncoder().encode('{"test": 2432232314}');
  if (
    !verifyStandardSignature(
      key,
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "1614265330",
      body,
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    )
  )
    failures.push("verifyStandardSignature refuses the published vector");
  // Through the receiver: the vector's secret, id, timestamp and body, as a signed test delivery.
  const r = receiverUnderTest(key);
  r.setNowS(1614265330);
  const headers = {
    "content-type": "application/json",
    "x-gw-signature": gwSignature(key, body),
    "x-gw-delivery-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    "x-gw-event": "ping",
  };
  const ok = await r.fetch(post(headers, body));
  if (ok.status !== 204) failures.push(`the receiver answered ${ok.status} to the Standard Webhooks vector`);
  const bad = await r.fetch(
    post({ ...headers, "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=" }, body),
  );
  if (bad.status !== 401) failures.push(`one changed character of the vector answered ${bad.status}`);
  const gh = receiverUnderTest("It's a Secret to Everybody");
  const ghOk = await gh.fetch(
    post({ "x-gw-signature": github, "x-gw-delivery-id": "d-1", "x-gw-event": "ping" }, "Hello, World!"),
  );
  if (ghOk.status !== 204) failures.push(`the receiver answered ${ghOk.status} to GitHub's vector`);
  return { cases: 6, failures };
}

export const knownAnswers: FuzzItem = {
  id: "signature-known-answers",
  tried:
    "The known-answer vectors of reliability.md §1.2 (GitHub's sha256 vector; Standard Webhooks' whsec_ vector), computed and verified by the receiver",
  held: "both signatures equal the published values; the receiver verifies them (a signed ping with the vectors' secret, id and time is 204) and refuses them with one bit changed",
  run: checkKnownAnswers,
};

export const receiverItems = [receiverRequests, signatureFlips, clockSkew, knownAnswers];
export { merge };
