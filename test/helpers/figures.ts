// Figures a reliability run measures (faults tried, records lost, memory, ...): printed as a test
// diagnostic line and written as JSON under $RELIABILITY_FIGURES (default: the OS temp directory), so
// the run's numbers can be copied into docs/reliability.md as measured.
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function reportFigures(name: string, figures: Record<string, unknown>): void {
  const dir = process.env.RELIABILITY_FIGURES ?? join(tmpdir(), 'gateway-reliability');
  mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ name, at, ...figures }, null, 2)}\n`);
  process.stderr.write(`# figures ${name}: ${JSON.stringify(figures)}\n`);
}
