// Soak (npm run test:reliability): SOAK_MS (default 10 minutes) at a fixed moderate rate through a real
// gateway process, with streams, client aborts and upstream faults mixed in (every tenth request carries
// a fault the mocks apply: resets, cuts, stalls, 429/503, malformed and non-object frames, slow first
// bytes). The gateway's RSS, heap and open file descriptors are sampled every second from inside the
// process (a probe loaded with --import) and must stay flat: the end (after the load and a quiet spell)
// within bounds of the start (after a warm-up), figures start / peak / end. Every answered request has
// its record; no answer is malformed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type Fault } from '../mocks/index.ts';
import { TEST_PRICING, type TestProvider } from '../helpers/gateway.ts';
import { spawnGateway, writeGatewayConfig } from '../helpers/process.ts';
import { reportFigures } from '../helpers/figures.ts';
import { runLoad, tally } from './load.ts';

const SOAK_MS = Number(process.env.SOAK_MS ?? 600_000);
const RATE = Number(process.env.SOAK_RATE ?? 20);
const WARMUP_MS = Math.min(60_000, SOAK_MS / 5);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const FAULTS: Fault[] = [
  { resetConnection: true }, { disconnectAfterChunks: 3 }, { stallAfterChunks: 3 }, { status: 503 }, { status: 429, retryAfter: 0 },
  { malformedSse: true }, { inject: 'scalar' }, { inject: 'error', afterChunks: 0 }, { delayFirstByteMs: 300 }, { disconnectAfterChunks: 0 },
];

type Sample = { t: number; rss: number; heapUsed: number; heapTotal: number; external: number; fds: number };
const MB = (n: number): number => Math.round(n / 1048576 * 10) / 10;

test(`soak: ${Math.round(SOAK_MS / 1000)} s at ${RATE} requests/s with streams, aborts and upstream faults; memory and descriptors flat`, { timeout: SOAK_MS + 240_000 }, async () => {
  const mocks = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini(), startMockBedrock()]);
  const [oai, ant, gem, bed] = mocks;
  const model = { name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096 };
  const fwd = ['x-mock-fault'];
  const providers: TestProvider[] = [
    { id: 'oai', format: 'openai-chat', base_url: oai!.url, models: [model], forward_headers: fwd },
    { id: 'ant', format: 'anthropic-messages', base_url: ant!.url, models: [model], forward_headers: fwd },
    { id: 'gem', format: 'gemini', base_url: gem!.url, models: [model], forward_headers: fwd },
    { id: 'bed', format: 'bedrock-converse', base_url: bed!.url, models: [{ ...model, upstream: 'anthropic.claude-test-model' }], forward_headers: fwd },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'gw-soak-'));
  const probe = join(dir, 'memory.jsonl');
  const cfg = writeGatewayConfig(providers, {
    storage: { log_bodies: 'metadata', writer: { batch_size: 200, flush_ms: 200, max_queue: 100_000 } },
    upstream: { first_byte_timeout_ms: 1500, idle_timeout_ms: 1500, max_attempts: 2, retry_after_cap_ms: 100, ejection: { consecutive_failures: 1_000_000 } },
  }, dir);
  const gw = await spawnGateway(cfg.configFile, { NODE_OPTIONS: `--import=${resolve(import.meta.dirname, 'mem-probe.ts')}`, MEM_PROBE_FILE: probe });
  const t0 = Date.now();
  try {
    const shots = await runLoad({
      url: gw.url, models: ['oai/test-model', 'ant/test-model', 'gem/test-model', 'bed/test-model'], clients: ['chat', 'messages', 'responses'],
      streamShare: 0.5, abortShare: 0.1, rate: RATE, maxInFlight: 200, timeoutMs: 20_000,
      headers: (i): Record<string, string> => (i % 10 === 7 ? { 'x-mock-fault': JSON.stringify(FAULTS[Math.floor(i / 10) % FAULTS.length]) } : {}),
      prompt: (i) => `soak request ${i} ${'with some words '.repeat(1 + (i % 20))}`,
      until: () => Date.now() - t0 >= SOAK_MS,
    });
    const loadEnd = Date.now();
    // A quiet spell: timers, pools and the writer settle; the end sample is taken after it.
    await sleep(15_000);
    const samples = readFileSync(probe, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Sample);
    const warm = samples.filter((s) => s.t >= t0 + WARMUP_MS);
    const start = warm.slice(0, 10);
    const end = samples.slice(-5);
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const fig = (k: 'rss' | 'heapUsed' | 'fds') => ({ start: median(start.map((s) => s[k])), peak: Math.max(...warm.map((s) => s[k])), end: median(end.map((s) => s[k])) });
    const rss = fig('rss'); const heap = fig('heapUsed'); const fds = fig('fds');
    // Heap in the last third of the load against the first third after warm-up: a leak grows steadily.
    const during = warm.filter((s) => s.t <= loadEnd);
    const third = Math.floor(during.length / 3);
    const heapFirst = median(during.slice(0, third).map((s) => s.heapUsed));
    const heapLast = median(during.slice(-third).map((s) => s.heapUsed));
    const exit = await gw.stop('SIGTERM');
    const db = new DatabaseSync(cfg.dbPath);
    const ids = new Set((db.prepare('SELECT id FROM inferences').all() as Array<{ id: string }>).map((r) => r.id));
    db.close();
    const answered = shots.filter((s) => s.id !== null);
    const lost = answered.filter((s) => !ids.has(s.id!)).length;
    const load = tally(shots);
    reportFigures('soak', {
      durationS: Math.round(SOAK_MS / 1000), rate: RATE, achievedRate: Math.round(shots.length / ((loadEnd - t0) / 1000) * 10) / 10, load, recordsLost: lost, exit,
      rssMB: { start: MB(rss.start), peak: MB(rss.peak), end: MB(rss.end) }, heapUsedMB: { start: MB(heap.start), peak: MB(heap.peak), end: MB(heap.end), firstThirdOfLoad: MB(heapFirst), lastThirdOfLoad: MB(heapLast) },
      fds, samples: samples.length, loadAverage: (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10),
      malformedExamples: shots.filter((s) => s.kind === 'malformed').slice(0, 3).map((s) => s.detail),
    });
    assert.equal(load.malformed ?? 0, 0, 'every answer well-formed');
    assert.equal(lost, 0, 'every answered request has its record');
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(fds.end <= fds.start + 16, `descriptors flat: ${fds.start} -> ${fds.end}`);
    assert.ok(heap.end <= heap.start * 1.5 + 32 * 1048576, `heap flat: ${MB(heap.start)} -> ${MB(heap.end)} MB`);
    assert.ok(heapLast <= heapFirst * 1.5 + 32 * 1048576, `no steady heap growth under load: ${MB(heapFirst)} -> ${MB(heapLast)} MB`);
    assert.ok(rss.end <= rss.start * 1.5 + 64 * 1048576, `RSS flat: ${MB(rss.start)} -> ${MB(rss.end)} MB`);
  } finally {
    await gw.stop('SIGKILL');
    for (const m of mocks) await m.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
