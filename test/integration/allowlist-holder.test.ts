import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AllowlistFileError, createAllowlistHolder } from "../../src/allowlist/holder.ts";
import { openStore } from "../../src/store/store.ts";
import { recordingLogger } from "../helpers/logger.ts";
import { tempDir } from "../helpers/temp.ts";

const ANN_TWO_SOURCES = `
[[entry]]
source = "device_messenger"
id = "+15555550100"
person_id = "ann"
[[entry]]
source = "community_chat"
id = "1001"
person_id = "ann"
`;

function setup() {
  const dir = tempDir();
  const path = join(dir, "allowlist.toml");
  const store = openStore(join(dir, "gw.db"));
  const log = recordingLogger();
  const holder = createAllowlistHolder({ path, identities: store.identities, log });
  return { path, store, log, holder };
}

describe("allowlist holder", () => {
  test("a missing file is an empty allowlist with a warning", () => {
    const { holder, log } = setup();
    holder.load();
    expect(holder.current().entries).toEqual([]);
    expect(log.entries.some((e) => e.level === "warn" && e.msg.includes("not found"))).toBe(true);
  });

  test("load builds identity links; a single-use person_id is noted at debug level, never warned about", () => {
    const { path, holder, store, log } = setup();
    writeFileSync(
      path,
      `${ANN_TWO_SOURCES}[[entry]]\nsource = "community_chat"\nid = "2002"\nperson_id = "bob"\n`,
    );
    holder.load();
    expect(store.identities.list()).toEqual([
      { person_id: "ann", source: "community_chat" },
      { person_id: "ann", source: "device_messenger" },
      { person_id: "bob", source: "community_chat" },
    ]);
    const single = log.entries.filter((e) => e.msg.includes("only one entry"));
    expect(single.map((e) => [e.level, e.obj])).toEqual([["debug", { person_id: "bob" }]]);
  });

  test("an invalid file at start-up is an error naming the file and the problems", () => {
    const { path, holder } = setup();
    writeFileSync(path, '[[entry]]\nsource = "nope"\n');
    expect(() => holder.load()).toThrow(AllowlistFileError);
    expect(() => holder.load()).toThrow(/entry 1: field "source"/);
  });

  test("reload applies a valid file and rebuilds links; an invalid one keeps the previous list", () => {
    const { path, holder, store, log } = setup();
    writeFileSync(path, ANN_TWO_SOURCES);
    holder.load();
    writeFileSync(path, '[[entry]]\nsource = "device_messenger"\nid = "+15555550177"\nperson_id = "cy"\n');
    expect(holder.reload()).toBe(true);
    expect(holder.current().lookup("device_messenger", "+15555550177")?.person_id).toBe("cy");
    expect(holder.current().lookup("device_messenger", "+15555550100")).toBeNull();
    expect(store.identities.list()).toEqual([{ person_id: "cy", source: "device_messenger" }]);

    writeFileSync(path, "[[entry]\nbroken");
    expect(holder.reload()).toBe(false);
    expect(holder.current().lookup("device_messenger", "+15555550177")?.person_id).toBe("cy");
    expect(store.identities.list()).toEqual([{ person_id: "cy", source: "device_messenger" }]);
    expect(log.entries.some((e) => e.level === "error" && e.msg.includes("keeping the previous list"))).toBe(
      true,
    );
  });
});
