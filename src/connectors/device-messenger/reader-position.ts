/**
 * Where the iMessage reader is (runner): its ROWID cursor and state as stored in gw.db, read once (only
 * this reader writes them) and written with every batch in the batch's own ingest transaction. A first
 * start, or a chat.db rebuilt below the cursor, places the cursor at chat.db's current end, loudly.
 */
import type { Source } from "../../core/envelope.ts";
import type { Logger } from "../../core/ports.ts";
import type { NormalizedChange } from "../../ingest/changes.ts";
import type { Ingest, NormalizedMessage } from "../../ingest/ingest.ts";
import type { CursorStore } from "../../store/cursors.ts";
import type { ChatDb } from "./chat-db.ts";
import { EMPTY_STATE, parseReaderState, type ReaderState } from "./reader-state.ts";

const SOURCE: Source = "device_messenger";

export function createReaderPosition(deps: {
  cursors: CursorStore;
  ingest: Ingest;
  log: Logger;
  /** Called after each commit with the new cursor. */
  advanced: (position: number) => void;
}) {
  let mine: { position: number; state: ReaderState } | null | undefined;
  const current = () => {
    if (mine === undefined) {
      const row = deps.cursors.get(SOURCE);
      mine = row ? { position: Number(row.position), state: parseReaderState(row.state) } : null;
    }
    return mine;
  };
  const cursor = (): number | null => current()?.position ?? null;
  const state = (): ReaderState => current()?.state ?? { ...EMPTY_STATE };

  /** Stores a batch (messages and changes) with the new position and state, then remembers them. */
  const commit = (
    messages: NormalizedMessage[],
    position: number,
    next: ReaderState,
    changes: readonly NormalizedChange[] = [],
  ) => {
    deps.ingest({
      source: SOURCE,
      messages,
      cursor: String(position),
      cursorState: JSON.stringify(next),
      ...(changes.length > 0 ? { changes } : {}),
    });
    mine = { position, state: next };
    deps.advanced(position);
  };

  /** Starts at chat.db's current end when there is no cursor, or when chat.db was rebuilt below it. */
  const placeOn = (chatDb: ChatDb) => {
    const at = cursor();
    const end = chatDb.maxRowid();
    let why: string | null = null;
    if (at === null) why = "first start";
    else if (end < at) why = `the database was rebuilt (its last ROWID ${end} is below the cursor ${at})`;
    if (why === null) return;
    commit([], end, { ...state(), highWater: chatDb.dateNear(end), pending: [] });
    deps.log.warn(
      { rowid: end, reason: why },
      "iMessage reader starts at the current end of chat.db; earlier messages are not imported",
    );
  };

  /** Changes found outside the cursor's way (edits and unsends of rows already read). */
  const applyChanges = (changes: readonly NormalizedChange[]) => {
    if (changes.length > 0) deps.ingest({ source: SOURCE, messages: [], cursor: null, changes });
  };

  return { cursor, state, commit, placeOn, applyChanges };
}

export type ReaderPosition = ReturnType<typeof createReaderPosition>;
