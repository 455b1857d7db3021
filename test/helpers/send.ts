/**
 * POST /messages/send against a test service (test/helpers/service.ts) for the send tests
 * (test/integration/api-send*.test.ts): `sendSetup(env)` seeds one iMessage from the friend's DM and one
 * Discord message from channel 42, so both channels are known, and `send(body, headers, raw)` posts with
 * the bearer and gives back the status, headers, text and parsed body.
 */
import type { RecordingConnector } from "../fakes/recording-connector.ts";
import { AUTH, inbound, testService } from "./service.ts";

export const DM = "+15555550100";
export const DISCORD = { id: "community_chat:channel:42", type: "group" as const, platformRef: "42" };
export type Err = { error: { code: string; message: string; details: Record<string, unknown> } };

export async function sendSetup(env: Record<string, string> = {}) {
  const t = await testService({ env });
  const [seen] = t.seed([inbound()]) as [string];
  const [seenDiscord] = t.seed([
    inbound({ source: "community_chat", channel: DISCORD, sender: { id: "1001", displayName: "ann" } }),
  ]) as [string];
  const device = t.connectors.device_messenger as RecordingConnector;
  const discord = t.connectors.community_chat as RecordingConnector;
  const send = async (body: unknown, headers: Record<string, string> = {}, raw?: string) => {
    const res = await t.request("POST", "/messages/send", { headers: { ...AUTH, ...headers }, body, raw });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: JSON.parse(text) as Record<string, unknown> & Err,
    };
  };
  return { ...t, seen, seenDiscord, device, discord, send };
}
