/**
 * Regression (found by `bun run chaos`): an iMessage attachment copied into the attachment store must
 * be 0600 from the moment it exists, not only once the copy is done. The copy used to take the source
 * file's mode (0644 for a file Messages downloaded) and be chmod-ed afterwards, so a kill -9 in between
 * left a world-readable file behind. Here the target's mode is sampled on every event-loop turn while a
 * 16 MiB copy runs.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stageAttachments } from "../../src/connectors/device-messenger/attachments.ts";
import { createIdFactory } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/ports.ts";
import { recordingLogger } from "../helpers/logger.ts";
import { tempDir } from "../helpers/temp.ts";

const SIZE = 16 * 1024 * 1024;

test("a copied attachment is 0600 from the moment it exists", async () => {
  const home = tempDir();
  const store = join(home, "attachments");
  mkdirSync(store, { mode: 0o700 });
  const source = join(home, "IMG_0001.jpg");
  writeFileSync(source, new Uint8Array(SIZE).fill(7), { mode: 0o644 });
  let done = false;
  const staging = stageAttachments(
    [
      {
        guid: "att-guid-1",
        filename: source,
        mime_type: "image/jpeg",
        uti: "public.jpeg",
        transfer_name: "IMG_0001.jpg",
        transfer_state: 5,
        total_bytes: SIZE,
        hide_attachment: 0,
      },
    ],
    {
      dir: store,
      maxBytes: 2 * SIZE,
      homeDir: home,
      slot: (work) => work(),
      ids: createIdFactory(systemClock),
      log: recordingLogger(),
      messageGuid: "msg-guid-1",
    },
  ).finally(() => {
    done = true;
  });
  const modes = new Set<string>();
  while (!done) {
    const [name] = readdirSync(store);
    if (name && existsSync(join(store, name)))
      modes.add((statSync(join(store, name)).mode & 0o777).toString(8));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const staged = await staging;
  expect([...modes]).toEqual(["600"]);
  expect(staged).toHaveLength(1);
  const target = join(store, staged[0]?.fileName as string);
  expect(statSync(target).mode & 0o777).toBe(0o600);
  expect(statSync(target).size).toBe(SIZE);
});
