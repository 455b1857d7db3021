/** Types for pino-roll 4 (it ships none): the options gw uses; the stream is a SonicBoom. */
declare module "pino-roll" {
  import type SonicBoom from "sonic-boom";
  export default function pinoRoll(options: {
    file: string;
    frequency?: "daily" | "hourly" | number;
    size?: number | string;
    extension?: string;
    dateFormat?: string;
    symlink?: boolean;
    mkdir?: boolean;
    sync?: boolean;
    mode?: number;
    /** SonicBoom's: lines beyond this many buffered bytes are dropped (emits 'drop'). */
    maxLength?: number;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
  }): Promise<SonicBoom>;
}
