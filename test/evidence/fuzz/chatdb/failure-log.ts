/**
 * The chat.db items' failure list: `add` keeps the first MAX_REPORTED failures in full and counts the
 * rest; `done` is the list, with the count of those left out.
 */

const MAX_REPORTED = 25;

export function failureLog() {
  const list: string[] = [];
  let more = 0;
  return {
    add: (f: string) => (list.length < MAX_REPORTED ? list.push(f) : more++),
    done: () => (more > 0 ? [...list, `… and ${more} more failure(s)`] : list),
  };
}
