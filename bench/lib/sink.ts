/**
 * bench/webhooks-sink.ts as a child of another benchmark: started, its clock offset measured over HTTP
 * (GET /now, the ping with the smallest round trip, as lib/child.ts does over stdin), its records read
 * back, and stopped with SIGTERM (it ignores stdin commands).
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

  static async start(secret: string): Promise<Sink> {
    const child = new Child("webhooks-sink", [join(import.meta.dir, "../webhooks-sink.ts")], {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      BENCH_SECRET: secret,
    });
    const port = (await child.waitFor((m) => "ready" in m, 30_000, "sink ready")).ready as number;
    const { off, err } = await sinkOffset(port);
    return new Sink(child, port, off, err);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async count(): Promise<{ n: number; dupes: number; bad: number }> {
    return (await (await fetch(`http://127.0.0.1:${this.port}/count`)).json()) as {
      n: number;
      dupes: number;
      bad: number;
    };
  }

  /** Delivery id → arrival, on our clock. */
  async arrivals(): Promise<{ byId: Map<string, number>; dupes: number; bad: number }> {
    const s = (await (await fetch(`http://127.0.0.1:${this.port}/stats`)).json()) as {
      dupes: number;
      bad: number;
      records: [string, number, number][];
    };
    return { byId: new Map(s.records.map(([id, t]) => [id, t - this.offsetMs])), dupes: s.dupes, bad: s.bad };
  }

  async stop(): Promise<void> {
    this.child.proc.kill("SIGTERM");
    await this.child.proc.exited;
    live.delete(this.child);
  }
}

/** The sink's clock minus ours, from the /now ping with the smallest round trip (25 pings). */
export async function sinkOffset(port: number): Promise<{ off: number; err: number }> {
  let best = { rtt: Number.POSITIVE_INFINITY, off: 0 };
  for (let i = 0; i < 25; i++) {
    const t1 = now();
    const { t } = (await (await fetch(`http://127.0.0.1:${port}/now`)).json()) as { t: number };
    const t2 = now();
    if (t2 - t1 < best.rtt) best = { rtt: t2 - t1, off: t - (t1 + t2) / 2 };
  }
  return { off: best.off, err: best.rtt / 2 };
}
