// How long the records' retention holds the gateway's event loop on SQLite: the same pass (records
// older than records_days deleted with their feedback, older bodies cleared, in chunks of 2,000) run
// by the main thread's own connection (what the gateway did before) and by the store's write thread
// (src/store/write-thread.ts, what it does now). Each round fills a fresh database with `--records`
// due records (a third with a feedback row, bodies of ~1 KB), then times one pass of each kind in
// alternating order; prints the longest event-loop gap (the larger of monitorEventLoopDelay's max
// and a 1 ms ticker's longest gap), the pass's wall time, the medians and the ratio thread / main.
//   node_modules/.bin/node bench/retention-stall.ts [--records 100000] [--rounds 5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { benchArgs } from './lib/args.ts';
import { openStore } from '../src/store/open.ts';
import type { InferenceRecord } from '../src/store/types.ts';
import { WriteThread } from '../src/store/write-thread.ts';
import { pruneOnce, sqlSteps, type RetentionSteps } from '../src/dashboard/retention.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const { values } = benchArgs({ options: { records: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '5' } } });
const N = Number(values.records); const ROUNDS = Number(values.rounds);
const DAY = 86_400_000;
const body = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(1000) }] });
const tmp = mkdtempSync(join(tmpdir(), 'gw-retention-stall-'));

const record = (id: string): InferenceRecord => ({
  id, createdAt: new Date().toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat', requestedModel: 'm',
  servedModel: 'p/m', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 1, ttftMs: 1, stream: false,
  inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0', finishReason: 'stop',
  metadata: null, extra: null, clientIp: null, requestBody: body, responseBody: body,
});

/** A fresh database holding N records 40 days old; its path. */
async function filled(name: string): Promise<string> {
  const path = join(tmp, `${name}.db`);
  const s = await openStore({ sqlitePath: path });
  const t0 = Date.now() - 40 * DAY;
  for (let i = 0; i < N; i += 5000) {
    const ids = Array.from({ length: Math.min(5000, N - i) }, (_, j) => uuidv7(t0 + i + j));
    await s.insertInferences(ids.map(record));
    await s.insertFeedback(ids.filter((_, j) => j % 3 === 0).map((inferenceId) => ({ id: uuidv7(), inferenceId, keyId: null, metric: 'good', type: 'boolean', value: 'true', reason: null, tags: {}, optimize: 'max', createdAt: new Date().toISOString() })));
  }
  await s.close();
  return path;
}

async function pass(kind: 'main' | 'thread', path: string): Promise<{ stall: number; ms: number }> {
  const s = await openStore({ sqlitePath: path });
  const thread = kind === 'thread' ? new WriteThread({ sqlitePath: path }) : null;
  await thread?.ready();
  const steps: RetentionSteps = thread ? { records: thread.pruneRecords, bodies: thread.clearBodies } : sqlSteps(s.sql);
  const h = monitorEventLoopDelay({ resolution: 1 });
  let gap = 0; let last = performance.now();
  const ticker = setInterval(() => { const now = performance.now(); gap = Math.max(gap, now - last); last = now; }, 1);
  await new Promise((r) => setTimeout(r, 20));
  h.enable(); gap = 0; last = performance.now();
  const t0 = performance.now();
  // Records due at 30 days and bodies at 7: every record goes (the bodies' pass then finds none).
  const r = await pruneOnce(steps, { recordsDays: 30, bodiesDays: 7 }, Date.now(), 10_000);
  const end = performance.now();
  const ms = end - t0;
  // The time since the last tick counts too: a pass that ends on a synchronous chunk gives the ticker no turn after it.
  gap = Math.max(gap, end - last);
  h.disable(); clearInterval(ticker);
  if (r.records !== N) throw new Error(`${kind}: deleted ${r.records} of ${N}`);
  await thread?.close();
  await s.close();
  return { stall: Math.max(gap, h.max / 1e6), ms };
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
const res = { main: { stall: [] as number[], ms: [] as number[] }, thread: { stall: [] as number[], ms: [] as number[] } };
for (let round = 0; round < ROUNDS; round++) {
  const order: Array<'main' | 'thread'> = round % 2 ? ['thread', 'main'] : ['main', 'thread'];
  for (const kind of order) {
    const r = await pass(kind, await filled(`${kind}-${round}`));
    res[kind].stall.push(r.stall); res[kind].ms.push(r.ms);
    console.log(`round ${round + 1} ${kind.padEnd(6)} longest stall ${r.stall.toFixed(1)} ms, pass ${r.ms.toFixed(0)} ms`);
  }
}
rmSync(tmp, { recursive: true, force: true });
const sm = median(res.main.stall); const st = median(res.thread.stall);
console.log(`\n${N} records, ${ROUNDS} rounds, medians: main thread: longest stall ${sm.toFixed(1)} ms, pass ${median(res.main.ms).toFixed(0)} ms; write thread: longest stall ${st.toFixed(1)} ms, pass ${median(res.thread.ms).toFixed(0)} ms`);
console.log(`ratio write thread / main thread: longest stall ${(st / sm).toFixed(3)}x, pass time ${(median(res.thread.ms) / median(res.main.ms)).toFixed(3)}x`);
