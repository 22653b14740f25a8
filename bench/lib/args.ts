// Command-line flags for a bench script: node:util's parseArgs, plus `--help` (or `-h`), which prints
// the script's opening comment (where each script documents what it measures and its flags), and a
// mistyped flag answered with one line naming it instead of Node's stack trace.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The `//` lines a script opens with, without the slashes. */
export function openingComment(file: string): string {
  const lines: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.join('\n');
}

/** parseArgs for the script being run (process.argv[1]); exits 0 after --help, 2 on a bad flag. */
export function benchArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const argv = config.args ?? process.argv.slice(2);
  const script = process.argv[1]!;
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(openingComment(script) || `${script}: no description`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (e) {
    console.error(`${(e as Error).message}\n(run with --help for the flags)`);
    process.exit(2);
  }
}
