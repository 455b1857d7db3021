/** Reading a command's own options (pure): `--name value` pairs in argv. */

/** The value after `--name`, or undefined when the option is absent. */
export function optionOf(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i === -1 ? undefined : argv[i + 1];
}
