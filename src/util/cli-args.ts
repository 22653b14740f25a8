// Arguments of the store commands (keys, users, router): one parser, so each refuses the same mistakes
// the same way, and the two phases every such command has: its arguments are checked (and its values,
// where no stored data is needed) before the store is opened, so a mistake never creates a database
// file or writes anything. Errors go to stderr, data to stdout.
import { GatewayError } from '../gateway-error.ts';

/** An operator's mistake on the command line: the message and the command's usage, exit code 2. */
export class UsageError extends Error {}

/** Where a command writes: data (a created key, a listing) to `out`, errors to `err`. */
export type CommandIo = { out: (line: string) => void; err: (line: string) => void };

export type ParsedArgs = {
  /** The valued flags given, by name without the dashes. */
  values: Map<string, string>;
  /** The bare flags given (`--json`). */
  bare: Set<string>;
  /** The arguments that are not flags, in order. */
  words: string[];
};

/**
 * `--flag value`, `--flag=value` and bare `--flag`s. Refused as a UsageError naming the flag: a flag the
 * command does not take, a valued flag without its value (`--name` last, or followed by another flag:
 * `--name=--x` passes such a value), a value given to a bare flag, and a valued flag given twice
 * (`--name a --name b` took the last one without a word; none of these flags is repeatable).
 */
export function parseArgs(args: readonly string[], valued: readonly string[], bare: readonly string[] = []): ParsedArgs {
  const parsed: ParsedArgs = { values: new Map(), bare: new Set(), words: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) { parsed.words.push(a); continue; }
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    if (bare.includes(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      parsed.bare.add(name);
      continue;
    }
    if (!valued.includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq < 0 ? args[++i] : a.slice(eq + 1);
    if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    if (parsed.values.has(name)) throw new UsageError(`--${name} given more than once (it takes one value)`);
    parsed.values.set(name, value);
  }
  return parsed;
}

/** A UsageError for the first word when a subcommand takes none (`users list now`). */
export function noWords(p: ParsedArgs): void {
  if (p.words.length > 0) throw new UsageError(`unexpected argument "${p.words[0]}"`);
}

/**
 * A command's mistake reported on stderr, with its exit code: 2 and the usage for a UsageError, 1 and
 * the message for a refused operation (GatewayError: a bad value, an unknown key). Anything else is
 * rethrown (main.ts reports it).
 */
export function reportCommandError(e: unknown, io: CommandIo, usage: string): number {
  if (e instanceof UsageError) { io.err(`error: ${e.message}\n${usage}`); return 2; }
  if (e instanceof GatewayError) { io.err(`error: ${e.message}`); return 1; }
  throw e;
}

/** What a store command is after its arguments were checked: an exit code already reported, or the work to run on the opened store. */
export type Prepared<S> = number | ((store: S) => Promise<number>);
