/**
 * The fake Discord gateway (JSON text frames, no compression; discord.md §3, §6). A session keeps its
 * sequence and every dispatch, also while its socket is closed, so RESUME replays what was missed, then
 * RESUMED; an unknown session gets op 9 d:false, and a client closing with 1000 ends its session, as on
 * Discord. Several clients of one bot each get their own session and every dispatch, as two instances of a
 * bot do on Discord.
 */
import type { Server, ServerWebSocket } from "bun";
import type { Payload } from "./types.ts";
import type { World } from "./world.ts";

const MESSAGE_CONTENT_INTENT = 1 << 15;

export interface SocketData {
  session: Session | null;
}

interface Session {
  id: string;
  seq: number;
  buffer: { s: number; t: string; d: unknown }[];
  ws: ServerWebSocket<SocketData> | null;
}

export interface GatewayOptions {
  token: string;
  heartbeatIntervalMs: number;
  messageContentIntent: boolean;
  url: () => string;
}

/** The gateway's mutable state, shared by its handlers and its test controls. */
interface GatewayState {
  sockets: Set<ServerWebSocket<SocketData>>;
  sessions: Map<string, Session>;
  counts: { identifies: number; resumes: number };
  /** Every socket close, in order: the code and reason either side gave. */
  closes: { code: number; reason: string }[];
  flags: { ackHeartbeats: boolean; answerIdentify: boolean };
  /** Dispatches held back (`hold`), in order, until `release`. */
  held: { t: string; d: unknown }[] | null;
  /** Which session is served first next (rotates). */
  turn: number;
}

const send = (ws: ServerWebSocket<SocketData>, frame: Payload) => {
  if (ws.readyState === 1) ws.send(JSON.stringify(frame));
};

/** A dispatch to one session: numbered, kept for a RESUME, sent if its socket is open. */
const push = (session: Session, t: string, d: unknown) => {
  session.seq += 1;
  session.buffer.push({ s: session.seq, t, d });
  if (session.ws) send(session.ws, { op: 0, t, s: session.seq, d });
};

/** A dispatch to every session (held back while `held`), starting with a different one each time. */
function dispatchTo(state: GatewayState, t: string, d: unknown): void {
  if (state.held) return void state.held.push({ t, d });
  const all = [...state.sessions.values()];
  state.turn += 1;
  for (let i = 0; i < all.length; i++) push(all[(i + state.turn) % all.length] as Session, t, d);
}

const readyPayload = (world: World, sessionId: string, resumeUrl: string): Payload => ({
  v: 10,
  user: { ...world.userPayload(world.bot), verified: true, mfa_enabled: false, flags: 0 },
  guilds: [...world.guilds.keys()].map((id) => ({ id, unavailable: true })),
  session_id: sessionId,
  resume_gateway_url: resumeUrl,
  shard: [0, 1],
  application: world.application,
  private_channels: [],
  relationships: [],
});

/** What tests do to the gateway: counts, closes, op 7 / op 9, drops, raw frames, holding dispatches. */
function gatewayControl(state: GatewayState) {
  const { sockets, sessions, counts, closes, flags } = state;
  return {
    /** The same dispatch, for tests that send payloads the world would never build. */
    dispatch: (t: string, d: unknown) => dispatchTo(state, t, d),
    get identifies() {
      return counts.identifies;
    },
    get resumes() {
      return counts.resumes;
    },
    connections: () => sockets.size,
    closes: () => [...closes],
    reconnect: () => {
      for (const ws of sockets) send(ws, { op: 7, d: null });
    },
    invalidSession: (resumable: boolean) => {
      if (!resumable) sessions.clear();
      for (const ws of sockets) send(ws, { op: 9, d: resumable });
    },
    close: (code: number, reason = "") => {
      for (const ws of sockets) ws.close(code, reason);
    },
    drop: () => {
      for (const ws of sockets) ws.terminate();
    },
    /**
     * Sends `frame` exactly as given to every open socket (a string as a text frame, bytes as a
     * binary frame): no sequence number, not buffered for a resume. For hostile-frame tests.
     */
    sendRaw: (frame: string | Uint8Array) => {
      for (const ws of sockets) if (ws.readyState === 1) ws.send(frame);
    },
    /** Holds every later dispatch back (a REST answer then arrives before its gateway echo). */
    hold: () => {
      state.held ??= [];
    },
    /** Sends the held dispatches, in order, and stops holding. */
    release: () => {
      const out = state.held ?? [];
      state.held = null;
      for (const f of out) dispatchTo(state, f.t, f.d);
    },
    /** false: heartbeats (op 1) are no longer answered with op 11. */
    get ackHeartbeats() {
      return flags.ackHeartbeats;
    },
    set ackHeartbeats(v: boolean) {
      flags.ackHeartbeats = v;
    },
    /** false: IDENTIFYs are counted and never answered (a login that hangs before READY). */
    get answerIdentify() {
      return flags.answerIdentify;
    },
    set answerIdentify(v: boolean) {
      flags.answerIdentify = v;
    },
  };
}

export function createGateway(world: World, o: GatewayOptions) {
  const state: GatewayState = {
    sockets: new Set(),
    sessions: new Map(),
    counts: { identifies: 0, resumes: 0 },
    closes: [],
    flags: { ackHeartbeats: true, answerIdentify: true },
    held: null,
    turn: 0,
  };
  const { sockets, sessions, counts, closes, flags } = state;

  /**
   * Checks the token (close 4004) and the MessageContent intent when it is "disabled in the Developer Portal"
   * (close 4014), then sends READY and one GUILD_CREATE per guild.
   */
  const identify = (ws: ServerWebSocket<SocketData>, d: { token?: string; intents?: number }) => {
    counts.identifies += 1;
    if (!flags.answerIdentify) return;
    if (d.token !== o.token && d.token !== `Bot ${o.token}`) return ws.close(4004, "Authentication failed");
    if (!o.messageContentIntent && ((d.intents ?? 0) & MESSAGE_CONTENT_INTENT) !== 0)
      return ws.close(4014, "Disallowed intent(s).");
    const session: Session = { id: crypto.randomUUID().replaceAll("-", ""), seq: 0, buffer: [], ws };
    sessions.set(session.id, session);
    ws.data.session = session;
    push(session, "READY", readyPayload(world, session.id, o.url()));
    for (const id of world.guilds.keys()) push(session, "GUILD_CREATE", world.guildCreate(id));
  };

  const resume = (
    ws: ServerWebSocket<SocketData>,
    d: { token?: string; session_id?: string; seq?: number },
  ) => {
    counts.resumes += 1;
    const session = d.session_id ? sessions.get(d.session_id) : undefined;
    if (!session || (d.token !== o.token && d.token !== `Bot ${o.token}`))
      return send(ws, { op: 9, d: false });
    if (session.ws && session.ws !== ws) session.ws.close(4009, "Resumed elsewhere");
    session.ws = ws;
    ws.data.session = session;
    for (const f of session.buffer) if (f.s > (d.seq ?? 0)) send(ws, { op: 0, t: f.t, s: f.s, d: f.d });
    session.seq += 1;
    send(ws, { op: 0, t: "RESUMED", s: session.seq, d: null });
  };

  const websocket = {
    open(ws: ServerWebSocket<SocketData>) {
      sockets.add(ws);
      send(ws, { op: 10, d: { heartbeat_interval: o.heartbeatIntervalMs } });
    },
    message(ws: ServerWebSocket<SocketData>, raw: string | Buffer) {
      let frame: { op?: number; d?: unknown };
      try {
        frame = JSON.parse(String(raw));
      } catch {
        return ws.close(4002, "Decode error");
      }
      if (frame.op === 1) {
        if (flags.ackHeartbeats) send(ws, { op: 11 });
      } else if (frame.op === 2) identify(ws, frame.d as { token?: string; intents?: number });
      else if (frame.op === 6) resume(ws, frame.d as { token?: string; session_id?: string; seq?: number });
    },
    close(ws: ServerWebSocket<SocketData>, code: number, reason: string) {
      sockets.delete(ws);
      closes.push({ code, reason });
      const session = ws.data.session;
      if (!session || session.ws !== ws) return;
      session.ws = null;
      if (code === 1000 || code === 1001) sessions.delete(session.id);
    },
  };

  return {
    websocket,
    upgrade: (req: Request, server: Server<SocketData>) => server.upgrade(req, { data: { session: null } }),
    /**
     * Sends a dispatch to every session of the bot (buffered for a resume while a socket is down),
     * starting with a different one each time so that no client is always served first.
     */
    dispatch: (t: string, d: unknown) => dispatchTo(state, t, d),
    control: gatewayControl(state),
    stop: () => {
      for (const ws of sockets) ws.terminate();
    },
  };
}

export type FakeGateway = ReturnType<typeof createGateway>;
