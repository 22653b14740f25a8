// Summarises V8 .cpuprofile files (from `bench/overhead.ts --profile DIR`): the functions with
// the most self time, and the same grouped by source file, to see where the gateway spends CPU.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

function filesOf(arg: string): string[] {
  if (!statSync(arg).isDirectory()) return [arg];
  return readdirSync(arg).flatMap((f) => filesOf(path.join(arg, f))).filter((f) => f.endsWith('.cpuprofile'));
}

/** Self time in microseconds per node id. */
function selfTimes(p: CpuProfile): Map<number, number> {
  const t = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) t.set(p.samples[i]!, (t.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  return t;
}

function shortUrl(url: string): string {
  const i = url.indexOf('/node_modules/');
  if (i >= 0) return url.slice(i + 1);
  const s = url.indexOf('/src/');
  if (s >= 0) return url.slice(s + 1);
  return url.replace(/^file:\/\//, '') || '(native)';
}

function printTop(title: string, m: Map<string, number>, total: number, n: number): void {
  console.log(`\n  ${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  }
}

const top = Number(process.env.TOP ?? 25);
const args = process.argv.slice(2);
if (args.length === 0) {
  console.error('usage: node bench/profile-top.ts <file.cpuprofile | dir> ... (TOP=n for more rows)');
  process.exit(2);
}
for (const file of args.flatMap(filesOf)) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfTimes(p)) {
    const f = byId.get(id)!.callFrame;
    total += us;
    // piscina workers block in Atomics.wait between tasks: sampled, but no CPU is used.
    if (f.functionName === '(idle)' || f.functionName === 'atomicsWaitLoop') { idle += us; continue; }
    const where = shortUrl(f.url);
    const key = `${f.functionName || '(anonymous)'}  ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    byFile.set(where, (byFile.get(where) ?? 0) + us);
  }
  const busy = total - idle;
  console.log(`\n${file}: ${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms busy (percentages of busy time)`);
  printTop('self time by function', fn, busy, top);
  printTop('self time by file', byFile, busy, Math.min(top, 15));
}
