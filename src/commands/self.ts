/** How this very program is started again: the compiled binary itself, or bun with the entry script. */
export function selfCommand(): string[] {
  return Bun.main.startsWith("/$bunfs") || Bun.main === process.execPath
    ? [process.execPath]
    : [process.execPath, Bun.main];
}
