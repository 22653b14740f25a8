// Per-stream CPU of the stream relays the engine runs for every streamed answer (SSE parsing, the codec or
// the pass-through relay, the progress tracking), in isolation and without sockets, so a change to them can
// be measured far below the end-to-end bench's noise. With --trees A,B the same streams go through each
// tree's modules in alternated processes, and the ratio B/A of the medians is printed.
//
//   node_modules/.bin/node bench/stream-relays.ts                       # this tree
//   node_modules/.bin/node bench/stream-relays.ts --trees /tmp/a,/tmp/b --rounds 9
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { benchArgs } from './lib/args.ts';
import { anthropicStream, openaiStream } from './lib/upstream.ts';

const { values } = benchArgs({ options: {
  trees: { type: 'string', default: '' }, rounds: { type: 'string', default: '7' }, streams: { type: 'string', default: '20000' },
  only: { type: 'string', default: '' }, child: { type: 'boolean', default: false },
} });
const trees = values.trees === '' ? [resolve(import.meta.dirname, '..')] : values.trees.split(',').map((t) => resolve(t));
const ROUNDS = Number(values.rounds);
const STREAMS = Number(values.streams);

type Relay = { push(c: Buffer): string; end(): string };
type Scenario = { name: string; chunks: Buffer[]; relay(): Relay };

const enc = (s: string): Buffer => Buffer.from(s);
const sse = (data: unknown): string => `data: ${JSON.stringify(data)}\r\n\r\n`;
const WORDS = ['Hello', ' from', ' the', ' bench', ' upstream', '.'];

/** A Gemini stream as streamGenerateContent?alt=sse sends it: one response per text piece, the last with finishReason and usage. */
const geminiStream: Buffer[] = WORDS.map((w, i) => enc(sse({
  candidates: [{ content: { role: 'model', parts: [{ text: w }] }, index: 0, ...(i === WORDS.length - 1 ? { finishReason: 'STOP' } : {}) }],
  usageMetadata: { promptTokenCount: 8, ...(i === WORDS.length - 1 ? { candidatesTokenCount: 6, totalTokenCount: 14 } : {}) },
  modelVersion: 'gemini-2.5-flash', responseId: 'resp-bench',
})));

async function scenarios(tree: string): Promise<Scenario[]> {
  const relayMod = await import(`${tree}/src/engine/relay.ts`);
  const registry = await import(`${tree}/src/formats/registry.ts`);
  const { encodeEventMessage } = await import(`${tree}/src/formats/bedrock/eventstream.ts`);
  const frame = (type: string, payload: unknown): Buffer => Buffer.from(encodeEventMessage(
    { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, enc(JSON.stringify(payload))));
  const bedrockStream: Buffer[] = [
    frame('messageStart', { role: 'assistant' }),
    ...WORDS.map((w) => frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: w } })),
    frame('contentBlockStop', { contentBlockIndex: 0 }),
    frame('messageStop', { stopReason: 'end_turn' }),
    frame('metadata', { usage: { inputTokens: 8, outputTokens: 6, totalTokens: 14 }, metrics: { latencyMs: 100 } }),
  ];
  const identity = (s: string): string => s;
  // The parts of a request and a catalog entry the relays read.
  const req = (clientFormat: string) => ({ id: '019a0000-0000-7000-8000-000000000000', clientFormat, includeUsage: false, body: { stream: true } });
  // translateRelay asks the provider (its format, its native formats) and the upstream model who signs the reasoning.
  const entry = (format: string) => ({ id: 'bench/model', upstream: 'model', provider: { format, native: {} } });
  const pass = (format: string, client: string) => () => relayMod.passthroughRelay(registry.relayCodecFor({ format, native: {} }, client), req(client), entry(format), identity);
  const translate = (wire: string, client: string) => () => relayMod.translateRelay(registry.codecFor(wire), req(client), entry(wire), identity);
  return [
    { name: 'chat-stream (pass-through)', chunks: openaiStream, relay: pass('openai-chat', 'openai-chat') },
    { name: 'messages-stream (pass-through)', chunks: anthropicStream, relay: pass('anthropic-messages', 'anthropic-messages') },
    { name: 'chat-to-anthropic-stream', chunks: anthropicStream, relay: translate('anthropic-messages', 'openai-chat') },
    { name: 'messages-to-openai-stream', chunks: openaiStream, relay: translate('openai-chat', 'anthropic-messages') },
    { name: 'chat-to-gemini-stream', chunks: geminiStream, relay: translate('gemini', 'openai-chat') },
    { name: 'chat-to-bedrock-stream', chunks: bedrockStream, relay: translate('bedrock-converse', 'openai-chat') },
  ].filter((s) => values.only === '' || s.name.startsWith(values.only));
}

/**
 * CPU microseconds per stream (this thread's, so time the shared machine gives to others does not
 * count): every chunk pushed, then the end, the output kept alive.
 */
function run(s: Scenario, n: number): number {
  let bytes = 0;
  const t0 = process.threadCpuUsage();
  for (let i = 0; i < n; i++) {
    const r = s.relay();
    for (const c of s.chunks) bytes += r.push(c).length;
    bytes += r.end().length;
  }
  const t1 = process.threadCpuUsage(t0);
  const us = (t1.user + t1.system) / n;
  if (bytes === 0) throw new Error(`${s.name}: the relay produced nothing`);
  return us;
}

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };

if (values.child) {
  // One tree, one process: warm up, measure each scenario three times in turn and keep its fastest
  // (the machine's noise only ever adds time), print the figures as JSON.
  const list = await scenarios(trees[0]!);
  for (const s of list) run(s, Math.min(STREAMS, 5000));
  const best = list.map(() => Infinity);
  for (let rep = 0; rep < 3; rep++) list.forEach((s, k) => { best[k] = Math.min(best[k]!, run(s, STREAMS)); });
  process.stdout.write(JSON.stringify(list.map((s, k) => [s.name, best[k]])));
  process.exit(0);
}

// Each round runs every tree in a process of its own (alternating which goes first), so no tree's JIT
// feedback or garbage touches another's figures; medians over the rounds.
const results = new Map<string, number[][]>();
let names: string[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = trees.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (const t of order) {
    const out = execFileSync(process.execPath, [import.meta.filename, '--child', '--trees', trees[t]!, '--streams', String(STREAMS), '--only', values.only], { encoding: 'utf8' });
    const figures = JSON.parse(out) as Array<[string, number]>;
    names = figures.map(([n]) => n);
    for (const [n, us] of figures) {
      const perTree = results.get(n) ?? trees.map(() => []);
      perTree[t]!.push(us);
      results.set(n, perTree);
    }
  }
}

console.log(`stream relays: CPU us per stream (median over ${ROUNDS} processes per tree of each one's best of 3 x ${STREAMS} streams) (load ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
for (const n of names) {
  const meds = results.get(n)!.map(median);
  const cols = meds.map((m, t) => `${trees.length > 1 ? `${t === 0 ? 'A' : 'B'} ` : ''}${m.toFixed(2)}`).join('  ');
  const ratio = trees.length > 1 ? `  B/A ${(meds[1]! / meds[0]!).toFixed(3)}` : '';
  console.log(`  ${n.padEnd(32)} ${cols}${ratio}`);
}
