/**
 * Where an unhandled error was raised, read from its stack as Bun prints it from source and from the
 * compiled binary with its embedded source map (the frames below are copied from real runs).
 */
import { describe, expect, test } from "bun:test";
import { faultOrigin, packageIn } from "../../src/core/fault-origin.ts";

const withStack = (stack: string) => Object.assign(new TypeError("boom"), { stack });

describe("faultOrigin", () => {
  test("@discordjs/ws from source: the package of the first frame", () => {
    const err = withStack(
      "TypeError: undefined is not an object (evaluating 'payload.d.heartbeat_interval')\n" +
        "      at onMessage (/work/main/node_modules/@discordjs/ws/dist/index.js:1037:46)\n" +
        "      at processTicksAndRejections (native:7:39)",
    );
    expect(faultOrigin(err)).toEqual({
      package: "@discordjs/ws",
      component: null,
      frame: "at onMessage (/work/main/node_modules/@discordjs/ws/dist/index.js:1037:46)",
    });
  });

  test("@discordjs/ws in the compiled binary (source map): relative paths", () => {
    const err = withStack(
      "TypeError: null is not an object (evaluating 'payload.d.session_id')\n" +
        "      at onMessage (node_modules/@discordjs/ws/dist/index.js:978:34)",
    );
    expect(faultOrigin(err).package).toBe("@discordjs/ws");
  });

  test("native and runtime frames are skipped: the first file decides", () => {
    const err = withStack(
      "Error: WebSocket is not open\n" +
        "      at send (native)\n" +
        "      at <anonymous> (node:events:99:1)\n" +
        "      at heartbeat (/x/node_modules/@discordjs/ws/dist/index.js:1200:5)\n" +
        "      at tick (/x/src/webhooks/dispatcher.ts:10:1)",
    );
    expect(faultOrigin(err).package).toBe("@discordjs/ws");
  });

  test("gw's own code: the component under src/, in both forms", () => {
    expect(
      faultOrigin(withStack("Error: x\n    at flush (/work/main/src/webhooks/dispatcher.ts:88:11)")),
    ).toEqual({
      package: null,
      component: "webhooks",
      frame: "at flush (/work/main/src/webhooks/dispatcher.ts:88:11)",
    });
    expect(
      faultOrigin(withStack("Error: x\n    at tick (src/connectors/device-messenger/poller.ts:5:1)"))
        .component,
    ).toBe("connectors/device-messenger");
    expect(faultOrigin(withStack("Error: x\n    at main (src/main.ts:5:1)")).component).toBe(".");
    expect(faultOrigin(withStack("Error: x\n    at /work/main/src/service.ts:5:1")).component).toBe(".");
  });

  test("unscoped packages, and no stack at all", () => {
    expect(
      faultOrigin(withStack("Error: x\n    at f (/a/node_modules/discord.js/src/client/Client.js:1:1)"))
        .package,
    ).toBe("discord.js");
    expect(faultOrigin("a string")).toEqual({ package: null, component: null, frame: null });
    expect(faultOrigin(withStack("Error: x\n    at f (native)"))).toEqual({
      package: null,
      component: null,
      frame: null,
    });
  });
});

describe("packageIn", () => {
  test("a name matches itself; a scope ending in / matches its packages only", () => {
    const owned = ["discord.js", "@discordjs/", "ws"];
    expect(packageIn("discord.js", owned)).toBe(true);
    expect(packageIn("@discordjs/rest", owned)).toBe(true);
    expect(packageIn("ws", owned)).toBe(true);
    expect(packageIn("wsx", owned)).toBe(false);
    expect(packageIn("@discordjsx/ws", owned)).toBe(false);
    expect(packageIn("elysia", owned)).toBe(false);
    expect(packageIn(null, owned)).toBe(false);
  });
});
