/**
 * releaseOf / describeSchema (device-messenger/release.ts) against the `message` columns of the six real
 * chat.db dumps in shared/fixtures/chatdb/versions (read in place), the writer's Sequoia subset, and the
 * variants chatdb.md §2.2 warns about (a column more or less than the dump).
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { describeSchema, releaseOf } from "../../src/connectors/device-messenger/release.ts";
import { CHAT_DB_SCHEMA_SQL } from "../../src/demo/chatdb-schema.ts";
import { RELEASES, type ReleaseName, releaseColumns } from "../helpers/chatdb-releases.ts";

const EXPECTED: Record<ReleaseName, [name: string, columns: number]> = {
  "big-sur": ["macOS 11 Big Sur or older", 74],
  monterey: ["macOS 12 Monterey", 75],
  ventura: ["macOS 13 Ventura", 82],
  sonoma: ["macOS 14 Sonoma", 88],
  sequoia: ["macOS 15 Sequoia", 94],
  tahoe: ["macOS 26 Tahoe", 95],
};

const messageColumns = (release: ReleaseName): string[] => releaseColumns(release).message ?? [];

describe("the six dumps", () => {
  for (const release of RELEASES) {
    test(`${release}: ${EXPECTED[release][0]}`, () => {
      const cols = messageColumns(release);
      expect(cols).toHaveLength(EXPECTED[release][1]);
      expect(releaseOf(cols)).toEqual({ id: release, name: EXPECTED[release][0] });
      expect(describeSchema(cols)).toBe(
        `${EXPECTED[release][0]} schema, ${EXPECTED[release][1]} message columns`,
      );
    });
  }
});

describe("files that differ from their dump", () => {
  const without = (release: ReleaseName, ...drop: string[]) =>
    messageColumns(release).filter((c) => !drop.includes(c));

  test("the writer's Sequoia subset (49 columns, no Sonoma or Monterey markers) is Sequoia", () => {
    const db = new Database(":memory:");
    db.exec(CHAT_DB_SCHEMA_SQL);
    const cols = db
      .query<{ name: string }, []>("PRAGMA table_info(message)")
      .all()
      .map((c) => c.name);
    db.close();
    expect(cols).toHaveLength(49);
    expect(releaseOf(cols).id).toBe("sequoia");
  });

  test("every column of every dump is known: none of them with macOS 26's markers reads as newer", () => {
    const tahoeMarkers = ["date_recovered", "is_time_sensitive", "ck_chat_id", "index_state"];
    for (const release of RELEASES)
      expect(releaseOf([...messageColumns(release), ...tahoeMarkers]).id).toBe("tahoe");
  });

  test("beeper's Ventura dump without sr_ck_* and a Sequoia file with filter_action keep their family", () => {
    expect(
      releaseOf(without("ventura", "sr_ck_sync_state", "sr_ck_record_id", "sr_ck_record_change_tag")).id,
    ).toBe("ventura");
    expect(releaseOf([...messageColumns("sequoia"), "filter_action"]).id).toBe("sequoia");
    expect(releaseOf([...messageColumns("tahoe"), "filter_action"]).id).toBe("tahoe");
  });

  test("one marker of a release is enough; the newest present wins", () => {
    expect(releaseOf([...messageColumns("big-sur"), "date_edited"]).id).toBe("ventura");
    expect(releaseOf([...messageColumns("big-sur"), "is_stewie"]).id).toBe("sonoma");
    expect(releaseOf(without("tahoe", "date_recovered", "is_time_sensitive", "index_state")).id).toBe(
      "tahoe",
    );
    expect(
      releaseOf(
        without("tahoe", "date_recovered", "is_time_sensitive", "ck_chat_id", "index_state", "schedule_type"),
      ).id,
    ).toBe("sequoia");
  });

  test("macOS 26's columns and one no release has: unknown, perhaps newer than macOS 26", () => {
    const cols = [...messageColumns("tahoe"), "is_hologram"];
    expect(releaseOf(cols)).toEqual({ id: "unknown", name: "unknown (newer than macOS 26?)" });
    expect(describeSchema(cols)).toBe(
      "schema of an unknown release (newer than macOS 26?), 96 message columns",
    );
    // An unknown column on an older file is that machine's variance, not a newer release.
    expect(releaseOf([...messageColumns("sonoma"), "is_hologram"]).id).toBe("sonoma");
  });

  test("no marker at all reads as Big Sur or older", () => {
    expect(releaseOf(["ROWID", "guid", "text", "date"]).id).toBe("big-sur");
    expect(releaseOf([]).name).toBe("macOS 11 Big Sur or older");
  });
});
