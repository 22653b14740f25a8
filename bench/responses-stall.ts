// How long one large request stalls the gateway's event loop, per route: a chat-completions body and
// the same conversation as a Responses body (store: false, and store: true, which also writes the stored
// response), each `--mb` MB, translated to an OpenAI-chat upstream that runs in a child process (so its
// own parsing is not measured) and answers a fixed completion. Rounds alternate the kinds; prints the
// longest event-loop gap per kind (the larger of monitorEventLoopDelay's max and a 1 ms ticker's
// longest gap), the medians and each kind's ratio to chat (pooled above workers.convert_threshold_bytes);
// `responses inline` is the store: false body on a second gateway with workers.threads 0 (no pool);
// `router` is the chat body with model "router" (routing parses it again on the event loop).
//   node_modules/.bin/node bench/responses-stall.ts [--mb 5] [--rounds 7] [--threads 1]
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { startTestGateway } from '../test/helpers/gateway.ts';

const arg = (name: string, d: number): number => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? Number(process.argv[i + 1]) : d; };
const mb = arg('mb', 5); const rounds = arg('rounds', 7); const threads = arg('threads', 1);

const UPSTREAM = `
import { createServer } from 'node:http';
const answer = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
const s = createServer((req, res) => { req.on('data', () => {}); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); }); });
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));`;
const child = spawn(process.execPath, ['--input-type=module', '-e', UPSTREAM], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((ok) => child.stdout!.once('data', (d: Buffer) => ok(Number(d.toString().trim()))));

const providers = [{ id: 'up', format: 'openai-chat' as const, base_url: `http://127.0.0.1:${port}/v1`, models: [{ name: 'm', pricing: { prompt: '0.000001', completion: '0.000002' }, context_window: 100_000_000, max_completion_tokens: 1000 }] }];
const gw = await startTestGateway({ providers, gateway: { workers: { threads }, responses: { retention_days: 1 } } });
// The same requests on a gateway without the pool: every body parsed and converted on the event loop
// (what a Responses body got before it went to the pool), as the baseline of this run.
const inline = await startTestGateway({ providers, gateway: { workers: { threads: 0 }, responses: { retention_days: 1 } } });

const text = 'lorem ipsum dolor sit amet '.repeat(74); // ~2 KB per turn
const turns = Math.ceil((mb * 1024 * 1024) / (text.length + 60));
const messages = Array.from({ length: turns }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${i} ${text}` }));
messages.push({ role: 'user', content: 'the end' });
// Encoded once: the client's own encoding is not the gateway's stall.
const bodies: Record<string, Buffer> = {
  chat: Buffer.from(JSON.stringify({ model: 'up/m', messages })),
  responses: Buffer.from(JSON.stringify({ model: 'up/m', input: messages, store: false })),
  'responses+store': Buffer.from(JSON.stringify({ model: 'up/m', input: messages, store: true })),
  router: Buffer.from(JSON.stringify({ model: 'router', messages })),
};
const paths: Record<string, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', 'responses+store': '/v1/responses', router: '/v1/chat/completions' };
const KINDS = ['chat', 'responses', 'responses+store', 'responses inline', 'router'];
const bodyOf = (kind: string): Buffer => bodies[kind.replace(' inline', '')]!;

const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
let gap = 0; let last = performance.now();
const ticker = setInterval(() => { const now = performance.now(); gap = Math.max(gap, now - last); last = now; }, 1);
const stalls: Record<string, number[]> = Object.fromEntries(KINDS.map((k) => [k, []]));
// The event loop's busy time over the request (eventLoopUtilization's active ms): this thread only, so
// other threads and processes on a shared machine move it far less than they move the longest gap.
const busy: Record<string, number[]> = Object.fromEntries(KINDS.map((k) => [k, []]));

async function once(kind: string): Promise<[number, number]> {
  await new Promise((r) => setTimeout(r, 30));
  h.reset(); gap = 0; last = performance.now();
  const elu0 = perf.eventLoopUtilization();
  const url = (kind.endsWith(' inline') ? inline.url : gw.url) + paths[kind.replace(' inline', '')]!;
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyOf(kind) });
  if (res.status !== 200) throw new Error(`${kind}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  // Deferred work (the stored-response insert, the record) runs after the answer: wait for it too.
  await new Promise((r) => setTimeout(r, 120));
  return [Math.max(h.max / 1e6, gap), perf.eventLoopUtilization(elu0).active];
}

for (const k of KINDS) await once(k); // warm-up: worker threads, tokenizers, statement caches
for (let i = 0; i < rounds; i++) {
  const order = [...KINDS];
  if (i % 2) order.reverse();
  for (const k of order) { const [stall, active] = await once(k); stalls[k]!.push(stall); busy[k]!.push(active); }
}
clearInterval(ticker);
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
const base = median(stalls.chat!);
const baseBusy = median(busy.chat!);
console.log(`body ${(bodies.chat!.length / 1048576).toFixed(2)} MB, workers.threads ${threads}, ${rounds} rounds`);
for (const [k, xs] of Object.entries(stalls)) {
  console.log(`${k.padEnd(16)} longest stall ms: ${xs.map((x) => x.toFixed(0)).join(' ')}  median ${median(xs).toFixed(1)} (x chat ${(median(xs) / base).toFixed(2)})  loop busy ms median ${median(busy[k]!).toFixed(1)} (x chat ${(median(busy[k]!) / baseBusy).toFixed(2)})`);
}
await gw.stop();
await inline.stop();
child.kill();
