/**
 * The bad-input items for malformed Discord gateway frames (their parts in gateway/): hostile dispatches
 * and raw frames from the fake Discord reach the service as `gw serve` wires it, in process and as a real
 * `gw serve`; after every batch real messages still arrive exactly once, nothing is invented, nothing
 * logged as an error. No bun:test hooks: an item closes everything it starts before it returns.
 */
import fc from "fast-check";
import { waitFor } from "../../helpers/process.ts";
import { buildDispatch, dispatchSpec, namedDispatches } from "./gateway/dispatches.ts";
import { NAMED_RAW, type RawSpec, rawSpec, sendRawSpec } from "./gateway/raw-frames.ts";
import { checkBatches, type Run, session, type World } from "./gateway/run.ts";
import type { Json } from "./gateway/values.ts";
import type { FuzzItem } from "./types.ts";

/** Seen while writing these items, left open: @discordjs/ws races under zombie reconnects. */
const ZOMBIE_RACES =
  "seen with the fake's 1 s heartbeat (multi-MiB frames stalled the event loop the fake and discord.js share past a beat, so discord.js closed its socket as a zombie, 4200, and resumed, up to 15 times in a run) and left open, since no frame's content is involved: @discordjs/ws 1.2.3 itself then (1) raised an unhandled rejection from heartbeat() sending on a socket not open (it would end gw serve), (2) twice in about ten scale-30 runs let the service's stop hang (its one unbounded wait is the connector's client.destroy()), and (3) after a stop within its 500 ms reconnect delay, reconnected and kept the process alive; the items now use Discord's 41.25 s interval";

/** Frames tried against the process only: in process, bun test itself takes the unhandled rejection. */
const NOT_TRIED =
  "not tried in process: op 9 (INVALID_SESSION) or op 10 (HELLO) without d, and a READY dispatch with d null: @discordjs/ws 1.2.3 (WebSocketShard.onMessage) reads payload.d.toString(), payload.d.heartbeat_interval and payload.d.session_id itself, in a promise it never awaits, so the TypeError is an unhandled rejection, which bun test reports as a failure of its own; gateway-process sends them to a gw serve process, whose process-level policy restarts the Discord connector";

/** Frames that make @discordjs/ws raise an unhandled rejection: gw serve restarts its Discord connector. */
const LIBRARY_FAULTS: [string, Json][] = [
  ["op 10 (HELLO) without d", { op: 10 }],
  ["op 9 (INVALID_SESSION) without d", { op: 9 }],
  ["READY with d null", { op: 0, t: "READY", s: 1_000_000, d: null }],
];

async function sendNamedDispatches(w: World, run: Run) {
  const named = namedDispatches(w);
  for (let i = 0; i < named.length; i += 6) {
    const batch = named.slice(i, i + 6);
    for (const [, spec] of batch) run.send(buildDispatch(w, spec, run.storedId));
    await run.settle(batch.map(([label]) => label).join("; "));
  }
}

async function sendNamedRaw(w: World, run: Run, list: [string, RawSpec][]) {
  for (let i = 0; i < list.length; i += 5) {
    const batch = list.slice(i, i + 5);
    const expect = batch.flatMap(([, spec], k) => sendRawSpec(w, run, spec, 1_000 + i + k));
    await run.settle(batch.map(([label]) => label).join("; "), expect);
  }
}

export const gatewayDispatches: FuzzItem = {
  id: "gateway-dispatches",
  tried:
    "Sequenced dispatches from the fake Discord with malformed payloads: MESSAGE_CREATE (missing id/channel_id/author/content, ids as numbers, invalid snowflakes, null author, author without id, names and content of the wrong type, content of 2 MiB, attachments not an array or with hostile url/filename/size, replies to nowhere, unknown channel and guild, member as a string, timestamp garbage, nesting up to 3000 deep, d null), MESSAGE_UPDATE/DELETE of stored messages, CHANNEL_CREATE, THREAD_CREATE, GUILD_CREATE and unknown event names (__proto__, constructor...); a friend and a stranger post after every batch",
  held: "no unhandled rejection or exception, no error logged, /healthz 200 after every batch; each real message stored exactly once (the friend's unread, the stranger's quarantined); every stored hostile message carries its frame's own id, sender, name, text and channel; the connector ok at the end",
  run: ({ scale, seed }) =>
    session("in-process", "dispatch", seed, async (w, run) => {
      await sendNamedDispatches(w, run);
      return checkBatches(
        fc.array(dispatchSpec(w), { minLength: 1, maxLength: 10 }),
        12 * scale,
        seed,
        async (specs) => {
          for (const spec of specs) run.send(buildDispatch(w, spec, run.storedId));
          await run.settle(`a batch of ${specs.map((s) => s.t).join(", ")}`);
        },
      );
    }),
};

export const gatewayRawFrames: FuzzItem = {
  id: "gateway-raw-frames",
  tried:
    "Raw frames outside the protocol: unknown op codes (numbers, strings, null, missing), op 1/11 with junk, op 0 without t or with t not a string, real messages re-sent with s going backwards, not numeric or 1e300, non-JSON and truncated JSON, empty text, JSON scalars, binary frames (random bytes, a dispatch as bytes), frames of 1–8 MiB (a real 8 MiB message, non-JSON, binary), JSON nested 10k–200k deep (whole frame, d, a message's embeds); a friend and a stranger post after every batch",
  held: "no unhandled rejection or exception, no error logged, /healthz 200 after every batch; the real messages in odd-sequence and 8 MiB frames stored exactly once with their exact text, the deep one refused without holding its channel, and the friend's and stranger's messages after each batch stored once; the connector ok at the end",
  run: async ({ scale, seed }) => {
    const out = await session("in-process", "raw", seed, async (w, run) => {
      await sendNamedRaw(w, run, NAMED_RAW);
      let n = 0;
      return checkBatches(
        fc.array(rawSpec(), { minLength: 1, maxLength: 8 }),
        10 * scale,
        seed,
        async (specs) => {
          const expect = specs.flatMap((spec) => sendRawSpec(w, run, spec, ++n));
          await run.settle(`a batch of ${specs.map((s) => s.kind).join(", ")}`, expect);
        },
      );
    });
    return { ...out, notes: [...(out.notes ?? []), NOT_TRIED, ZOMBIE_RACES] };
  },
};

/** The frames that ended a `gw serve` process before the connector refused them (see the notes). */
const CRASHERS = [
  "d null",
  "null author",
  "attachments [null]",
  "attachments not an array",
  "member as a string",
  "content as an object",
  "GUILD_CREATE d null",
  "event named __proto__",
];

export const gatewayProcess: FuzzItem = {
  id: "gateway-process",
  tried:
    "A real `gw serve` process (from source, default connector timings) logged in to the fake Discord, sent the dispatches that used to end it (d null, null author, attachments [null] or not an array, member a string, content an object, GUILD_CREATE d null, an event named __proto__), the frames that make @discordjs/ws raise an unhandled rejection (op 10 and op 9 without d, READY with d null), a message nested 60k deep, non-JSON, binary, an unknown op and an 8 MiB message, then random batches of dispatches and raw frames",
  held: "the process stays up (nothing but JSON log lines on stderr, no error logged), /healthz 200 after every batch, each real message stored exactly once, nothing invented; after each library fault the connector restarts (a new IDENTIFY) and is ok again; the connector ok at the end; SIGTERM exits 0",
  run: ({ scale, seed }) =>
    session("gw serve", "process", seed, async (w, run) => {
      const named = namedDispatches(w).filter(([label]) => CRASHERS.includes(label));
      for (const [, spec] of named) run.send(buildDispatch(w, spec, run.storedId));
      await run.settle(CRASHERS.join("; "));
      for (const [label, frame] of LIBRARY_FAULTS) {
        const identifies = w.fake.gateway.identifies;
        run.send({ raw: JSON.stringify(frame) });
        await waitFor(
          () => (w.fake.gateway.identifies > identifies ? true : undefined),
          `a restart after ${label}`,
        );
        await waitFor(
          async () => {
            const h = await run.target.api("GET", "/healthz");
            return (h.body.connectors as Record<string, { state: string }>)?.community_chat?.state === "ok"
              ? true
              : undefined;
          },
          `community_chat ok after ${label}`,
          15_000,
        );
        await run.settle(label);
      }
      await sendNamedRaw(
        w,
        run,
        NAMED_RAW.filter(([label]) =>
          [
            "embeds nested 60k deep",
            "non-JSON text",
            "binary bytes",
            "unknown op 99",
            "8 MiB message",
          ].includes(label),
        ),
      );
      let n = 0;
      const mixed = fc.oneof(
        dispatchSpec(w).map((d) => ({ d })),
        rawSpec().map((r) => ({ r })),
      );
      return checkBatches(
        fc.array(mixed, { minLength: 1, maxLength: 8 }),
        3 * scale,
        seed,
        async (frames) => {
          const expect: string[] = [];
          for (const f of frames)
            if ("d" in f) run.send(buildDispatch(w, f.d, run.storedId));
            else expect.push(...sendRawSpec(w, run, f.r, ++n));
          await run.settle(`a mixed batch of ${frames.length}`, expect);
        },
      );
    }),
};

export const gatewayItems: FuzzItem[] = [gatewayDispatches, gatewayRawFrames, gatewayProcess];
