// What recording a routed request's decision costs the main thread, in process, per row, over the
// whole catalog and three named models: the checkout's DecisionWriter encoding rows as they come
// (RowEncoder.add: packing the decision, the row's head and the features' meta as JSON, the vector as
// numbers) in chunks of up to 500, flushed every 2,000 rows (a 250 ms flush at ~8,000 routed requests
// a second), each chunk posted as piscina posts a task to the router's worker (the post is the event
// loop's part; the receiving side is drained outside the timing).
// With --baseline DIR the same on that checkout's code in the same process, the two taking turns.
// Run: node bench/router-encode.ts [--baseline DIR] [--rows N] [--rounds R]
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { benchArgs } from './lib/args.ts';
import { benchPath } from './lib/child.ts';
import { everyProviderKey } from './lib/repo-config.ts';
import { median } from './lib/stats.ts';

const { values: f } = benchArgs({ options: { baseline: { type: 'string' }, rows: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } });
type Tree = { name: string; root: string };
const trees: Tree[] = [{ name: 'this', root: benchPath('..') }, ...(f.baseline ? [{ name: 'baseline', root: path.resolve(f.baseline) }] : [])];
const msg = [{ role: 'user', content: 'Hello, how are you today?' }];
const shapes: Record<string, Record<string, unknown>> = {
  catalog: { model: 'router', messages: msg },
  named: { model: 'router', models: ['gpt-4o-mini', 'gpt-4.1-mini', 'gpt-4o'], messages: msg },
};

/** One checkout's encoder over one routed decision of each shape: encodes `n` rows, returns CPU us per row. */
async function encoderOf(t: Tree): Promise<(shape: string, n: number) => Promise<number>> {
  const mod = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(t.root, p)).href) as T;
  const { compileConfig } = await mod<typeof import('../src/config/compile.ts')>('src/config/compile.ts');
  const { loadConfig } = await mod<typeof import('../src/config/load.ts')>('src/config/load.ts');
  const { RouterService } = await mod<typeof import('../src/router/service.ts')>('src/router/service.ts');
  const { DecisionWriter } = await mod<typeof import('../src/router/decision-writer.ts')>('src/router/decision-writer.ts');
  const env = { ...process.env, ...everyProviderKey() };
  const cfg = compileConfig(loadConfig(path.join(t.root, 'bench/gateway.router.yaml'), env), env);
  const router = new RouterService({ sql: null, settings: () => cfg.router, isEjected: () => false });
  const routed = Object.fromEntries(Object.entries(shapes).map(([k, body]) => {
    const r = router.routeSliced(cfg, structuredClone(body), 'openai-chat', null, '/v1/chat/completions', 'id');
    if (r instanceof Promise) throw new Error('a short prompt is routed synchronously');
    return [k, r];
  }));
  const attempts = [{ provider: 'openai', model: 'gpt-4o-mini', status: 200, latencyMs: 100, error: null }];
  return async (shape, n) => {
    const r = routed[shape]!;
    const { port1, port2 } = new MessageChannel();
    const w = new DecisionWriter(async (chunk) => { port1.postMessage({ op: 'decisions', chunk }); }, { flushMs: 3_600_000, maxQueue: 1_000_000 });
    const c0 = process.threadCpuUsage();
    for (let i = 0; i < n; i++) {
      w.enqueue({ inferenceId: '019300000000000000000000000000' + (i % 10), createdAt: '2026-11-30T00:00:00.000Z', keyId: null, servedModel: r.targets[0]!.entry.id, canonical: 'gpt-4o-mini', kind: r.view.features.kind, status: 200, costUsd: '0.000012' },
        r.view.features, r.decision, attempts as never, cfg.router.recordCandidates);
      if (i % 2000 === 1999) await w.flush();
    }
    await w.flush();
    const c = process.threadCpuUsage(c0);
    await w.close();
    while (receiveMessageOnPort(port2)) { /* drained: the worker's side, not timed */ }
    port1.close();
    return (c.user + c.system) / n;
  };
}

const encs = await Promise.all(trees.map(encoderOf));
const n = Number(f.rows);
for (const shape of Object.keys(shapes)) {
  for (const e of encs) await e(shape, 5000); // warm
  const cpu = encs.map(() => [] as number[]);
  for (let r = 0; r < Number(f.rounds); r++) for (const [k, e] of encs.entries()) cpu[k]!.push(await e(shape, n));
  for (const [k, t] of trees.entries()) {
    const ratio = k > 0 ? `  (this ${(median(cpu[0]!) / median(cpu[k]!)).toFixed(2)}x of baseline)` : '';
    console.log(`${shape.padEnd(8)} ${t.name.padEnd(8)} encode ${median(cpu[k]!).toFixed(2).padStart(5)} us/row (median of ${cpu[k]!.length})${ratio}`);
  }
}
