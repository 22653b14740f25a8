// The warnings of one config load about `${VAR}` references without a default whose variable is not
// set (the value is empty): one line per variable, naming where it is used. `check` prints them, and
// `serve` at start and on every reload (the running gateway never said so: a provider served with an
// empty API key until its first 401).
import type { ConfigProblem } from './load.ts';

/** One place an unset `${VAR}` is used (`message` says what the empty value means). */
export type UnsetVariable = ConfigProblem & { variable: string };

/** `warning: FILE at PATH: ${VAR} is not set ...`, once per variable, its further places after "also at". */
export function unsetVariableLines(warnings: readonly UnsetVariable[]): string[] {
  const byName = new Map<string, UnsetVariable[]>();
  for (const w of warnings) byName.set(w.variable, [...(byName.get(w.variable) ?? []), w]);
  return [...byName.values()].map(([first, ...more]) => `warning: ${first!.file} at ${first!.path}: ${first!.message}`
    + (more.length > 0 ? ` (also at ${more.map((w) => `${w.file} at ${w.path}`).join(', ')})` : ''));
}
