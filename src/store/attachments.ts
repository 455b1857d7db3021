/**
 * Attachment records. `file_name` is the stored-bytes reference inside the attachment directory; it
 * is cleared when retention deletes the bytes, and the record itself stays.
 */
import type { Database } from "bun:sqlite";

export type AttachmentRow = {
  id: string;
  message_id: string;
  mime: string;
  size_bytes: number;
  file_name: string | null;
  platform_ref: string | null;
  created_at: number;
};

export function createAttachmentStore(db: Database) {
  const insert = db.prepare<unknown, [AttachmentRow]>(
    `INSERT INTO attachments (id, message_id, mime, size_bytes, file_name, platform_ref, created_at)
     VALUES ($id, $message_id, $mime, $size_bytes, $file_name, $platform_ref, $created_at)`,
  );
  const byId = db.prepare<AttachmentRow, [string]>("SELECT * FROM attachments WHERE id = ?1");
  const byMessage = db.prepare<AttachmentRow, [string]>(
    "SELECT * FROM attachments WHERE message_id = ?1 ORDER BY id",
  );
  const byMessages = db.prepare<AttachmentRow, [string]>(
    "SELECT * FROM attachments WHERE message_id IN (SELECT value FROM json_each(?1)) ORDER BY message_id, id",
  );
  const expired = db.prepare<AttachmentRow, [number, number]>(
    "SELECT * FROM attachments WHERE file_name IS NOT NULL AND created_at < ?1 ORDER BY created_at LIMIT ?2",
  );
  const clear = db.prepare<unknown, [string]>("UPDATE attachments SET file_name = NULL WHERE id = ?1");

  return {
    insert: (row: AttachmentRow): void => void insert.run(row),
    get: (id: string): AttachmentRow | null => byId.get(id),
    forMessage: (messageId: string): AttachmentRow[] => byMessage.all(messageId),
    /** The attachments of many messages in one query, by message id. */
    forMessages(messageIds: readonly string[]): Map<string, AttachmentRow[]> {
      const out = new Map<string, AttachmentRow[]>();
      if (messageIds.length === 0) return out;
      for (const a of byMessages.all(JSON.stringify(messageIds)))
        out.set(a.message_id, [...(out.get(a.message_id) ?? []), a]);
      return out;
    },
    /** Records whose bytes are still stored and were created before `cutoff`. */
    storedBefore: (cutoff: number, limit: number): AttachmentRow[] => expired.all(cutoff, limit),
    clearFile: (id: string): void => void clear.run(id),
  };
}

export type AttachmentStore = ReturnType<typeof createAttachmentStore>;
