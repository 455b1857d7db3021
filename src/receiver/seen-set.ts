/**
 * The receiver's memory of delivery ids (spec I.3): a bounded most-recently-used set. A lookup of a
 * known id refreshes it; adding past the capacity forgets the least recently used. In memory only, so a
 * restart forgets; the signed timestamp bounds deliberate replays (reliability.md §1.2).
 */
export function createSeenSet(capacity: number) {
  const ids = new Map<string, true>();
  return {
    /** Whether the id was seen; a hit becomes the most recent. */
    has(id: string): boolean {
      if (!ids.delete(id)) return false;
      ids.set(id, true);
      return true;
    },
    add(id: string): void {
      ids.delete(id);
      ids.set(id, true);
      for (const oldest of ids.keys()) {
        if (ids.size <= capacity) break;
        ids.delete(oldest);
      }
    },
    get size(): number {
      return ids.size;
    },
  };
}

export type SeenSet = ReturnType<typeof createSeenSet>;
