/**
 * bench/lib/sink-child.ts as a child of a benchmark: started, its clock offset measured over HTTP
 * (GET /now, the ping with the smallest round trip, as lib/child.ts does over stdin), its records read
 * back (raw, on its clock, or as arrivals on ours), its own CPU time, a reset between rounds, and stopped
 * with SIGTERM (it ignores stdin commands).
 */
import { join } from "node:path";
import { Child, live } from "./child.ts";
import { now } from "./child-protocol.ts";

export class Sink {
  private constructor(
    readonly child: Child,
    readonly port: number,
    /** The sink's clock minus ours, ms, and its uncertainty (half the smallest round trip). */
    readonly offsetMs: number,
    readonly offsetErrMs: number,
  ) {}

  /** Starts the sink and measures its clock offset with `pings` pings. */
  static async start(secret: string, pings = 25): Promise<Sink> {
    const child = new Child("webhooks-sink", [join(import.meta.dir, "sink-child.ts")], {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      BENCH_SECRET: secret,
    });
    const port = (await child.waitFor((m) => "ready" in m, 30_000, "sink ready")).ready as number;
    const { off, err } = await sinkOffset(port, pings);
    return new Sink(child, port, off, err);
  }

  private async get<T>(path: string): Promise<T> {
    return (await (await fetch(`http://127.0.0.1:${this.port}${path}`)).json()) as T;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  count(): Promise<{ n: number; dupes: number; bad: number }> {
    return this.get("/count");
  }

  /** Every record as the sink keeps it: [delivery id, arrival on the sink's clock, body bytes]. */
  stats(): Promise<SinkStats> {
    return this.get("/stats");
  }

  /** Delivery id → arrival, on our clock. */
  async arrivals(): Promise<{ byId: Map<string, number>; dupes: number; bad: number }> {
    const s = await this.stats();
    return { byId: new Map(s.records.map(([id, t]) => [id, t - this.offsetMs])), dupes: s.dupes, bad: s.bad };
  }

  /** The sink's clock offset measured again now (it drifts slowly). */
  measureOffset(pings = 25): Promise<{ off: number; err: number }> {
    return sinkOffset(this.port, pings);
  }

  /** The sink process's CPU time so far (user + system), µs. */
  async cpuUs(): Promise<number> {
    const c = await this.get<{ userUs: number; systemUs: number }>("/cpu");
    return c.userUs + c.systemUs;
  }

  /** Forgets every record (between rounds). */
  async reset(): Promise<void> {
    await (await fetch(`http://127.0.0.1:${this.port}/reset`, { method: "POST" })).body?.cancel();
  }

  async stop(): Promise<void> {
    this.child.proc.kill("SIGTERM");
    await this.child.proc.exited;
    live.delete(this.child);
  }
}

export interface SinkStats {
  n: number;
  dupes: number;
  bad: number;
  records: [id: string, t: number, bytes: number][];
}

/** The sink's clock minus ours and half the round trip, from the /now ping with the smallest round trip. */
export async function sinkOffset(port: number, pings = 25): Promise<{ off: number; err: number }> {
  let best = { rtt: Number.POSITIVE_INFINITY, off: 0 };
  for (let i = 0; i < pings; i++) {
    const t1 = now();
    const { t } = (await (await fetch(`http://127.0.0.1:${port}/now`)).json()) as { t: number };
    const t2 = now();
    if (t2 - t1 < best.rtt) best = { rtt: t2 - t1, off: t - (t1 + t2) / 2 };
  }
  return { off: best.off, err: best.rtt / 2 };
}
