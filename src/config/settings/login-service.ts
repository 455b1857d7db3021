/**
 * Settings of `gw service`: which login-service manager it writes for. Rows of the settings table
 * (settings.ts), in the order the README and `gw --help` list them.
 */
import * as p from "../parsers.ts";
import { setting } from "./row.ts";

export const LOGIN_SERVICE_SETTINGS = {
  serviceManager: setting<"launchd" | "systemd">({
    env: "GW_SERVICE_MANAGER",
    faces: ["service"],
    doc: "Which login-service manager `gw service` writes for: `launchd` (a LaunchAgent) or `systemd` (a user unit).",
    defaultText: "`launchd` on macOS, else `systemd`",
    fallback: (_d, h) => (h.platform === "darwin" ? "launchd" : "systemd"),
    parse: p.oneOf(["launchd", "systemd"] as const),
  }),
};
