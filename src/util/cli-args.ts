// Flags of the command-line tools (users, router): `--name value` read from an argument list, with a
// usage error of the tool's own when a flag is given without its value.

export class UsageError extends Error {}

/** `--name value` from `args`: undefined when absent; a UsageError when the value is missing. */
export function flagReader(args: readonly string[]): (name: string) => string | undefined {
  return (name) => {
    const i = args.indexOf(`--${name}`);
    if (i < 0) return undefined;
    const v = args[i + 1];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`--${name} needs a value`);
    return v;
  };
}

/**
 * A UsageError for the first argument that is none of the flags a subcommand takes (`valued` flags
 * with their value, `bare` ones alone): a mistyped flag (`--reson`) or one meant for another
 * subcommand is refused instead of being ignored while the command goes ahead.
 */
export function onlyFlags(args: readonly string[], valued: readonly string[], bare: readonly string[] = []): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (valued.includes(a)) i++;
    else if (!bare.includes(a)) throw new UsageError(`unexpected argument "${a}"`);
  }
}
