/**
 * What the tests of the demo's macOS Messages fakes share (chatdb-schema, chatdb-writer and
 * messages-standin .test.ts): the real Sequoia schema dump when shared/fixtures has it, the schemas the
 * writer is run on, the two test chats, a fixed June 2024 clock, and readers of what was written (every
 * integer exact through a second, read-only connection; a row's body decoded).
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeAttributedBody } from "../../src/connectors/device-messenger/typedstream.ts";
import { CHAT_DB_SCHEMA_SQL } from "../../src/demo/chatdb-schema.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { tempDir } from "./temp.ts";

export const FIXTURE = join(import.meta.dir, "../../../shared/fixtures/chatdb/schema-sequoia.sql");
export const HAS_FIXTURE = existsSync(FIXTURE);
export const SCHEMAS: [string, () => string][] = [["our subset", () => CHAT_DB_SCHEMA_SQL]];
if (HAS_FIXTURE) SCHEMAS.push(["the real Sequoia dump", () => readFileSync(FIXTURE, "utf8")]);

export const DM = "iMessage;-;+15555550100";
export const GROUP = "iMessage;+;chat100000000000000001";
/** 2024-06-01T12:00:00.123Z. */
export const JUNE_MS = 1_717_243_200_123;
export const JUNE_NS = 738_936_000_123_000_000n;

export type Row = Record<string, unknown>;

/** A writer on a new chat.db of `schemaSql` with the one-to-one chat DM and the group chat "Walk". */
export function newWriter(schemaSql: string, now = () => JUNE_MS) {
  const path = join(tempDir("gw-chatdb-"), "chat.db");
  const writer = openChatDbWriter(path, { schemaSql, now });
  writer.chat({ guid: DM, style: 45, chatIdentifier: "+15555550100", participants: ["+15555550100"] });
  writer.chat({
    guid: GROUP,
    style: 43,
    chatIdentifier: "chat100000000000000001",
    displayName: "Walk",
    participants: ["+15555550100", "friend@example.com"],
  });
  return { path, writer };
}

export const one = (db: Database, sql: string, ...args: (string | number)[]) =>
  db.query<Row, (string | number)[]>(sql).get(...args) as Row;
export const all = (db: Database, sql: string, ...args: (string | number)[]) =>
  db.query<Row, (string | number)[]>(sql).all(...args);

/** Reads with a second, read-only connection that returns every integer as a bigint. */
export function exact<T>(path: string, sql: string, ...args: number[]): T {
  const db = new Database(path, { readonly: true, safeIntegers: true });
  try {
    return db.query<T, number[]>(sql).get(...args) as T;
  } finally {
    db.close();
  }
}

export const bodyOf = (row: Row) => decodeAttributedBody(row.attributedBody as Uint8Array | null);
