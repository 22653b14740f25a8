// In-process cost of a budget reservation's estimate (src/http/reservation-estimate.ts): decode,
// measure the prompt, price it for one target. Prints the median us per reservation of 15 runs of
// 2,000 for a short chat, a chat with an image by URL, with an inline 100 KB PNG, and 4 KB of CJK.
// Run: node bench/reservation-estimate.ts (from the repository root).
import { decodeForReservation, reservationUsage, reservedPrompt } from '../src/http/reservation-estimate.ts';
import { warmTokenizers } from '../src/tokens/index.ts';
import type { AttemptTarget } from '../src/engine/plan.ts';
import type { KeyRecord } from '../src/store/types.ts';

await warmTokenizers();
const pricing = { prompt: '0.0000025', completion: '0.00001', image: '0', request: '0', web_search: '0', internal_reasoning: '0', input_cache_read: '0', input_cache_write: '0', input_cache_write_1h: '0' };
const targets = ['openai/gpt-4o', 'anthropic/claude-sonnet-4-6'].map((id) => ({ entry: { id, model: { context_window: 128_000, max_completion_tokens: 16_384, pricing } } }) as unknown as AttemptTarget);
const key = { budgetUsd: '10', tpmLimit: null } as KeyRecord;
const u32 = (n: number) => [(n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255];
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, ...u32(13), 0x49, 0x48, 0x44, 0x52, ...u32(1024), ...u32(768), 8, 6, 0, 0, 0]), Buffer.alloc(100_000, 7)]).toString('base64');
const chat = (content: unknown) => ({ model: 'x', max_tokens: 256, messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content }] });
const cases: Array<[string, Record<string, unknown>]> = [
  ['short chat', chat('Explain the difference between TCP and UDP in two sentences.')],
  ['image by URL', chat([{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: 'https://images.example.com/cat.png' } }])],
  ['inline PNG 100 KB', chat([{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }])],
  ['CJK 4 KB', chat('我们今天讨论人工智能的发展历史和未来的方向。机器学习是一种让计算机从数据中学习的技术。'.repeat(100))],
];
for (const [name, body] of cases) {
  const raw = Buffer.from(JSON.stringify(body));
  const one = () => reservationUsage(targets, body, raw, key, reservedPrompt(decodeForReservation('openai-chat', body), raw.length, null));
  for (let i = 0; i < 2000; i++) one();
  const runs: number[] = [];
  for (let r = 0; r < 15; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 2000; i++) one();
    runs.push(Number(process.hrtime.bigint() - t0) / 1e3 / 2000);
  }
  runs.sort((a, b) => a - b);
  console.log(`${name.padEnd(20)} median ${runs[7]!.toFixed(2)} us  min ${runs[0]!.toFixed(2)}  cost $${one().costUsd}`);
}
