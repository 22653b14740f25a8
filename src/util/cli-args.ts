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
