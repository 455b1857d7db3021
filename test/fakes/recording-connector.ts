/**
 * A connector test double for API tests: records every send, answers with a platform id, and can be
 * told to fail (PLATFORM_AUTH, PLATFORM_SEND_FAILED) or to hold a send until released. The real
 * connectors have their own end-to-end tests against fake platforms.
 */
import type { Connector, SendRequest, SendResult } from "../../src/connectors/connector.ts";
import type { Source } from "../../src/core/envelope.ts";
import { AppError } from "../../src/core/errors.ts";

export interface RecordingConnector extends Connector {
  sends: SendRequest[];
  failNext(code: "PLATFORM_AUTH" | "PLATFORM_SEND_FAILED"): void;
  /** The next send waits until the returned function is called. */
  holdNext(): () => void;
}

export function recordingConnector(source: Source): RecordingConnector {
  const sends: SendRequest[] = [];
  let failure: "PLATFORM_AUTH" | "PLATFORM_SEND_FAILED" | null = null;
  let hold: Promise<void> | null = null;
  return {
    source,
    sends,
    async start() {},
    async stop() {},
    health: () => ({ state: "ok", detail: "" }),
    failNext(code) {
      failure = code;
    },
    holdNext() {
      let release = () => {};
      hold = new Promise<void>((r) => {
        release = r;
      });
      return release;
    },
    async send(req): Promise<SendResult> {
      sends.push(req);
      if (hold) {
        const h = hold;
        hold = null;
        await h;
      }
      if (failure) {
        const code = failure;
        failure = null;
        throw new AppError(
          code,
          code === "PLATFORM_AUTH" ? "The platform rejected the credentials." : "The platform send failed.",
          {
            source,
          },
        );
      }
      return {
        platformId: `sent-${sends.length}`,
        sender: { id: "gw-self", displayName: "gw" },
        raw: { n: sends.length },
      };
    },
  };
}
