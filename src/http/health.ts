/**
 * The /healthz report (decisions.md): `{status, version, uptime_s, connectors, webhooks}`. States and
 * counts only, never message data or secrets, because the route is open. `status` is `ok` when every
 * enabled connector is `ok`, else `degraded`.
 */
import { type Static, Type } from "@sinclair/typebox";
import { ConnectorHealthSchema } from "../connectors/connector.ts";

export const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
  version: Type.String(),
  uptime_s: Type.Integer({ minimum: 0 }),
  connectors: Type.Object({
    device_messenger: ConnectorHealthSchema,
    community_chat: ConnectorHealthSchema,
  }),
  webhooks: Type.Object({ queue_depth: Type.Integer({ minimum: 0 }), dead: Type.Integer({ minimum: 0 }) }),
});
export type Health = Static<typeof HealthSchema>;

export interface HealthSources {
  version: string;
  startedAtMs: number;
  now(): number;
  connectors(): Health["connectors"];
  webhookCounts(): { pending: number; dead: number };
}

export function buildHealth(src: HealthSources): Health {
  const connectors = src.connectors();
  const healthy = Object.values(connectors).every((c) => c.state === "ok" || c.state === "disabled");
  const { pending, dead } = src.webhookCounts();
  return {
    status: healthy ? "ok" : "degraded",
    version: src.version,
    uptime_s: Math.max(0, Math.floor((src.now() - src.startedAtMs) / 1000)),
    connectors,
    webhooks: { queue_depth: pending, dead },
  };
}
