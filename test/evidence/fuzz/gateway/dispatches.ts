/**
 * Hostile dispatches (sequenced, op 0): a spec is an event name, a base payload (a message from the fake
 * world, or a bare channel/thread/guild) and field mutations or a whole replacement `d`; `buildDispatch`
 * makes the frame. `dispatchSpec` generates them (mostly malformed messages); `namedDispatches` is every
 * malformation the issue lists, once, sent before the random batches.
 */
import fc from "fast-check";
import { baseMessage, messageFields, wellTypedFields } from "./messages.ts";
import type { Frame, World } from "./run.ts";
import { ABSENT, expand, type Json, junk, MIB, pastSnowflake, STORED_ID, snowflake } from "./values.ts";

/** Sets (or with ABSENT removes) `path` in `root`; a path through a non-object is left alone. */
function setPath(root: unknown, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = root;
  for (const k of keys.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return;
    node = (node as Json)[k];
  }
  if (typeof node !== "object" || node === null) return;
  const last = keys.at(-1) as string;
  if (value === ABSENT) delete (node as Json)[last];
  else (node as Json)[last] = value;
}

const WHOLE = fc.constantFrom<unknown>(null, [], "x", 5, true, {});
type Mutation = [string, unknown];
export interface DispatchSpec {
  t: string;
  id: string;
  where: string;
  who: string;
  mutations: Mutation[];
  whole: unknown;
}

const mutationsOf = (fields: Record<string, fc.Arbitrary<unknown>>, max: number) =>
  fc.array(fc.oneof(...Object.entries(fields).map(([path, arb]) => fc.tuple(fc.constant(path), arb))), {
    maxLength: max,
  }) as fc.Arbitrary<Mutation[]>;

/** Hostile dispatches: malformed messages mostly, then channel, thread, guild and unknown events. */
export function dispatchSpec(w: World): fc.Arbitrary<DispatchSpec> {
  const fields = messageFields(w);
  const channelFields = {
    id: fc.oneof(junk, pastSnowflake, fc.constantFrom(w.general.id, w.thread.id)),
    type: fc.oneof(junk, fc.constantFrom(0, 1, 2, 4, 11, 12, 15, 99)),
    guild_id: fc.oneof(junk, pastSnowflake),
    parent_id: fc.oneof(junk, pastSnowflake),
    name: junk,
    permission_overwrites: junk,
    recipients: junk,
    thread_metadata: junk,
    owner_id: junk,
    member: junk,
    position: junk,
  };
  const guildFields = {
    id: fc.oneof(junk, pastSnowflake, fc.constant(w.guild.id)),
    name: junk,
    channels: fc.oneof(
      junk,
      fc.constantFrom<unknown>([null], [{ id: null, type: 0 }], [{ id: "5", type: "x" }]),
    ),
    threads: junk,
    roles: fc.oneof(junk, fc.constantFrom<unknown>([null], [{ id: null }])),
    members: fc.oneof(junk, fc.constantFrom<unknown>([{ user: null }], [null], [{ user: { id: 5 } }])),
    emojis: junk,
    stickers: junk,
    presences: junk,
    voice_states: junk,
    unavailable: junk,
  };
  const base = { id: pastSnowflake, where: fc.constantFrom("general", "thread", "dm") };
  const who = fc.constantFrom("mallory", "friend", "stranger");
  const rare = fc.option(WHOLE, { freq: 12, nil: undefined });
  const unknownName = fc
    .oneof(
      fc.stringMatching(/^[A-Z][A-Z_]{0,24}$/),
      fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "", "message_create"),
      fc.constantFrom("MESSAGE_CREATE ", "TYPING_START", "INTERACTION_CREATE", "GUILD_MEMBERS_CHUNK"),
    )
    .filter((t) => !["READY", "RESUMED", "MESSAGE_CREATE", "GUILD_CREATE"].includes(t));
  const of = (t: fc.Arbitrary<string>, f: Record<string, fc.Arbitrary<unknown>>, max: number) =>
    fc.record({ t, ...base, who, mutations: mutationsOf(f, max), whole: rare });
  return fc.oneof(
    { weight: 8, arbitrary: of(fc.constant("MESSAGE_CREATE"), fields, 4) },
    { weight: 5, arbitrary: of(fc.constant("MESSAGE_CREATE"), wellTypedFields(w), 5) },
    { weight: 2, arbitrary: of(fc.constant("MESSAGE_UPDATE"), fields, 3) },
    {
      weight: 1,
      arbitrary: of(fc.constant("MESSAGE_DELETE"), { id: fields.id, channel_id: fields.channel_id }, 2),
    },
    { weight: 1, arbitrary: of(fc.constantFrom("CHANNEL_CREATE", "THREAD_CREATE"), channelFields, 3) },
    { weight: 1, arbitrary: of(fc.constant("GUILD_CREATE"), guildFields, 3) },
    {
      weight: 1,
      arbitrary: fc.record({
        t: unknownName,
        ...base,
        who,
        mutations: fc.constant([]),
        whole: fc.oneof(fc.jsonValue({ maxDepth: 4 }), junk),
      }),
    },
  ) as fc.Arbitrary<DispatchSpec>;
}

export function buildDispatch(w: World, s: DispatchSpec, storedId: () => string | undefined): Frame {
  let d: unknown;
  if (s.t.startsWith("MESSAGE_")) d = baseMessage(w, s.id, s.where, s.who);
  else if (s.t === "CHANNEL_CREATE" || s.t === "THREAD_CREATE")
    d = {
      id: s.id,
      type: s.t === "THREAD_CREATE" ? 11 : 0,
      guild_id: w.guild.id,
      name: "x",
      parent_id: null,
    };
  else if (s.t === "GUILD_CREATE")
    d = { id: s.id, name: "x", channels: [], threads: [], roles: [], members: [] };
  else d = {};
  for (const [path, value] of s.mutations) setPath(d, path, expand(value, storedId));
  if (s.whole !== undefined) d = expand(s.whole, storedId);
  return { t: s.t, d };
}

// --- the named corpus -------------------------------------------------------------------------------

type Named = [string, DispatchSpec];
type Labelled = (
  label: string,
  mutations: Mutation[],
  o?: { t?: string; whole?: unknown; who?: string; where?: string },
) => Named;

/** The corpus's spec maker and past snowflakes, numbered from one counter so that no two ids meet. */
function corpusIds(): { spec: Labelled; past: () => string } {
  let n = 0;
  const spec: Labelled = (label, mutations, o = {}) => [
    label,
    {
      t: o.t ?? "MESSAGE_CREATE",
      id: snowflake(Date.now() - 2 * 86_400_000, ++n),
      where: o.where ?? "general",
      who: o.who ?? "mallory",
      mutations,
      whole: o.whole,
    },
  ];
  const past = () => snowflake(Date.now() - 3 * 86_400_000, ++n);
  return { spec, past };
}

/** Every malformation the issue lists, once: messages first, then the other events. */
export function namedDispatches(w: World): Named[] {
  const ids = corpusIds();
  return [...namedMessages(w, ids), ...namedEvents(w, ids)];
}

function namedMessages(w: World, { spec, past }: ReturnType<typeof corpusIds>): Named[] {
  const origin = w.fake.origin;
  return [
    spec("MESSAGE_CREATE without id", [["id", ABSENT]]),
    spec("without channel_id", [["channel_id", ABSENT]]),
    spec("without author", [["author", ABSENT]]),
    spec("without content", [["content", ABSENT]]),
    spec("id as a number", [["id", 1234567890123456]]),
    spec("channel_id as a number", [["channel_id", Number(w.general.id)]]),
    spec("null author", [["author", null]]),
    spec("author without id", [["author.id", ABSENT]]),
    spec("author id as a number", [["author.id", Number(w.friend.id)]], { who: "friend" }),
    spec("author name as an object", [["author.global_name", { a: 1 }]]),
    spec("the friend's id with no name", [["author", { id: w.friend.id }]], { where: "dm" }),
    spec("content as an object", [["content", { a: 1 }]]),
    spec("content of 2 MiB", [["content", { $huge: 2 * MIB }]], { where: "thread" }),
    spec("id not a snowflake", [["id", "abc"]]),
    spec("id 0", [["id", "0"]]),
    spec("id over 64 bits", [["id", "18446744073709551616"]]),
    spec("channel_id with a leading zero", [["channel_id", "01234567890123456"]]),
    spec("attachments not an array", [["attachments", { a: 1 }]]),
    spec("attachments [null]", [["attachments", [null]]]),
    spec("attachments with hostile url, filename and size", [
      [
        "attachments",
        [
          { id: past(), filename: "../../etc/passwd", size: -1, url: "file:///etc/passwd" },
          { id: past(), filename: "a\u0000b", size: 1e20, url: `${origin}/attachments/1/2/missing.bin` },
          { id: past(), filename: "x", size: 5, url: "http://127.0.0.1:1/refused" },
          { id: past(), filename: "g.json", size: 10, url: `${origin}/attachments/../api/v10/gateway` },
        ],
      ],
    ]),
    spec("message_reference to nowhere", [["message_reference", { message_id: past(), channel_id: past() }]]),
    spec("unknown channel_id and guild_id", [
      ["channel_id", past()],
      ["guild_id", past()],
    ]),
    spec("member as a string", [["member", "nope"]]),
    spec("timestamp garbage", [
      ["timestamp", "garbage"],
      ["edited_timestamp", {}],
    ]),
    spec("embeds nested 3000 deep", [["embeds", { $deep: 3000 }]]),
    spec("d null", [], { whole: null }),
    spec("d an array", [], { whole: [] }),
  ];
}

function namedEvents(w: World, { spec }: ReturnType<typeof corpusIds>): Named[] {
  return [
    spec("MESSAGE_UPDATE d null", [], { t: "MESSAGE_UPDATE", whole: null }),
    spec(
      "MESSAGE_UPDATE changing a stored message",
      [
        ["id", STORED_ID],
        ["content", "changed by an update"],
      ],
      { t: "MESSAGE_UPDATE" },
    ),
    spec(
      "MESSAGE_UPDATE with a null author",
      [
        ["id", STORED_ID],
        ["author", null],
      ],
      { t: "MESSAGE_UPDATE" },
    ),
    spec("MESSAGE_DELETE d null", [], { t: "MESSAGE_DELETE", whole: null }),
    spec("MESSAGE_DELETE of a stored message", [["id", STORED_ID]], { t: "MESSAGE_DELETE" }),
    spec("CHANNEL_CREATE d null", [], { t: "CHANNEL_CREATE", whole: null }),
    spec(
      "CHANNEL_CREATE with a number id and a string type",
      [
        ["id", 5],
        ["type", "x"],
      ],
      { t: "CHANNEL_CREATE" },
    ),
    spec(
      "THREAD_CREATE with junk metadata",
      [
        ["thread_metadata", "x"],
        ["parent_id", null],
      ],
      { t: "THREAD_CREATE" },
    ),
    spec("GUILD_CREATE d null", [], { t: "GUILD_CREATE", whole: null }),
    spec(
      "GUILD_CREATE of our guild with channels a string",
      [
        ["id", w.guild.id],
        ["channels", "x"],
      ],
      { t: "GUILD_CREATE" },
    ),
    spec("GUILD_CREATE with a null member user", [["members", [{ user: null }]]], { t: "GUILD_CREATE" }),
    spec("unknown event", [], { t: "NOT_AN_EVENT", whole: { a: 1 } }),
    spec("event named __proto__", [], { t: "__proto__", whole: {} }),
    spec("event named constructor", [], { t: "constructor", whole: null }),
  ];
}
